import ArgumentParser

/// `--data-dir`, shared by every command that opens the database.
struct DataDirectoryOption: ParsableArguments {
    @Option(name: .customLong("data-dir"), help: "Directory holding the database file (default ./hearth-data, or HEARTH_DATA_DIR).")
    var dataDir: String?

    var path: String { dataDir ?? Environment()["HEARTH_DATA_DIR"] ?? "./hearth-data" }
}
