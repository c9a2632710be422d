import ArgumentParser
import HearthSystem

/// The `hearth` command: parses arguments and makes one call into the library per command.
@main
struct Hearth: AsyncParsableCommand {
    /// This build's version (`hearth --version`), semantic versioning.
    static let version = "0.1.0"

    /// Fills in closed standard streams before anything opens a file or a socket
    /// (`Syscall.openClosedStandardStreams`), then parses and runs the command.
    static func main() async {
        Syscall.openClosedStandardStreams()
        await main(nil)
    }

    static let configuration = CommandConfiguration(
        commandName: "hearth",
        abstract: "A self-hosted Firebase Realtime Database, on SQLite or PostgreSQL.",
        discussion: """
            'hearth serve' serves Firebase's REST API with live streams, the wire protocol of the \
            official client SDKs (/.ws, /.lp), accounts (Firebase Auth's REST endpoints) and the \
            admin console (/console/), under Firebase's security rules; it delivers database \
            triggers to Cloud Functions and holds several databases (namespaces). Data is in \
            SQLite (./hearth-data) on one node, or in PostgreSQL (--store postgres://...) for \
            several. The other commands manage accounts, tokens and keys, triggers, rules, and \
            the data itself (backup, restore, export, import, copy), and profile a running database; 'hearth <command> --help' \
            describes each.
            """,
        version: version,
        subcommands: [Serve.self, Rules.self, Users.self, Admins.self, Triggers.self, Token.self, Keys.self, Profile.self, Backup.self, Restore.self, ExportData.self, ImportData.self, Copy.self, ConfigDocs.self],
        defaultSubcommand: nil
    )
}
