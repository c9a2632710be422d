import ArgumentParser
import HearthServer

/// `hearth config-docs`: prints the settings table of docs/configuration.md (to regenerate it).
struct ConfigDocs: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "config-docs", abstract: "Print the settings table of docs/configuration.md.", shouldDisplay: false)

    func run() {
        print(ServeSettings.markdownTable())
    }
}
