import ArgumentParser

/// The `hearth` command: parses arguments and makes one call into the library per command.
@main
struct Hearth: AsyncParsableCommand {
    /// This build's version (`hearth --version`), semantic versioning.
    static let version = "0.1.0"

    static let configuration = CommandConfiguration(
        commandName: "hearth",
        abstract: "A self-hosted Firebase Realtime Database: REST, rules, accounts, live streams, in one SQLite file.",
        version: version,
        subcommands: [Serve.self, Rules.self, Users.self, Admins.self, Triggers.self, Token.self, Keys.self, Backup.self, Restore.self, ExportData.self, ImportData.self, Copy.self, ConfigDocs.self],
        defaultSubcommand: nil
    )
}
