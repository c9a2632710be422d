import ArgumentParser
import Foundation
import HearthJSON
import HearthMaintenance
import HearthServer
import HearthStore
#if canImport(Glibc)
import Glibc
#endif

/// `hearth backup`: a consistent copy of a data directory while the server runs.
struct Backup: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Copy the database and the signing keys to a new directory, also while the server runs.",
        discussion: """
            DEST is created and must not exist. It holds hearth.sqlite (one consistent \
            snapshot, taken with SQLite's online backup API without stopping writes, checked \
            with PRAGMA integrity_check) and keys/ (the token signing keys). It is written \
            under a temporary name and renamed when complete; files are 0600, folders 0700. \
            With --store postgres://... the backup has the same form: the tree from one \
            snapshot, then users, refresh tokens, keys and console administrators, copied \
            into a new hearth.sqlite (the change log is not kept).
            """)

    @Argument(help: "The backup directory to create.") var destination: String
    @OptionGroup var data: DataDirectoryOption

    func run() throws {
        try Tool.run {
            if let (directory, format) = try data.localStore {
                try DataDirectoryBackup.backup(dataDirectory: directory, format: format, to: destination)
                print("backed up \(directory) to \(destination)")
            } else {
                let store = try data.openEngine()
                defer { store.close() }
                let summary = try DataDirectoryBackup.backup(engine: store, format: Engines.backupFormat, to: destination)
                for path in summary.prioritiesNotMoved {
                    print("warning: the priority of \(path) is not in the backup (its subtree is larger than one write)")
                }
                print("backed up \(summary) from \(try data.location) to \(destination)")
            }
        }
    }
}

/// `hearth restore`: put a backup back, with the server stopped.
struct Restore: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Restore a backup (made by 'hearth backup') into a data directory that is not in use.",
        discussion: """
            SOURCE is a backup directory (or a bare hearth.sqlite). It is checked first \
            (PRAGMA integrity_check, a known schema version). A data directory that does not \
            exist is created (mode 0700; its parent must exist). One that already has a \
            database is refused unless --force; the server must be stopped (a data directory \
            in use is refused, naming the process). The backup's signing keys are added to the directory's keys. \
            Streams that resume afterwards start from a fresh snapshot. With --store \
            postgres://... the database must be empty (no --force); everything is copied in.
            """)

    @Argument(help: "The backup directory (or a hearth.sqlite file).") var source: String
    @OptionGroup var data: DataLocationOption
    @Flag(help: "Replace the data directory's existing database.") var force = false

    func run() throws {
        try Tool.run {
            if let (directory, format) = try data.localStore {
                // The one operator command that creates a data directory (0700; its parent
                // must exist): a restore onto a new machine. Removed again if the restore fails.
                guard DataDirectoryBackup.exists(source) else { throw MaintenanceError.missing(path: source) }
                let created = !DataDirectoryBackup.exists(directory)
                let lock = try data.lock(.replacesData, create: true)
                if data.namespace != nil {
                    // A namespace's directory is made inside the data directory's `namespaces/`.
                    try? FileManager.default.createDirectory(atPath: (directory as NSString).deletingLastPathComponent,
                                                             withIntermediateDirectories: true)
                }
                do {
                    try DataDirectoryBackup.restore(from: source, format: format, intoDataDirectory: directory, force: force)
                } catch {
                    lock?.release()
                    if created { DataDirectoryBackup.removeCreatedDirectory(directory) }
                    if !force, case .exists(let path)? = error as? MaintenanceError { throw Tool.fail(Self.refusal(existing: path)) }
                    throw error
                }
                print("restored \(source) into \(directory)\(created ? " (created)" : "")")
            } else {
                // Nothing is replaced in a shared database: it must be empty.
                guard !force else { throw Tool.fail("--force is for a SQLite data directory; a PostgreSQL store is restored only when empty") }
                let location = try data.location
                let store = try data.openEngine()
                defer { store.close() }
                let summary = try DataDirectoryBackup.restore(from: source, format: Engines.backupFormat, into: store,
                                                              destinationName: location.description)
                print("restored \(summary) from \(source) into \(location)")
            }
        }
    }

    /// Why a restore onto an existing database was refused, and how to go ahead.
    static func refusal(existing path: String) -> String {
        "\(path) already exists; refusing to overwrite it. To replace it with the backup, run the same command "
            + "with --force (the server must be stopped; 'hearth backup' keeps a copy of what is there now)"
    }
}

/// `hearth export`: the tree (or a part) as JSON, streamed.
struct ExportData: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "export",
        abstract: "Write the data at a path as JSON (Firebase's export format), also while the server runs.",
        discussion: """
            The output is the stored form, as GET ?format=export gives it: objects only \
            (arrays were stored as integer-keyed objects and stay so), keys in the byte order \
            of their paths, a missing path is null. It is read from one snapshot and written \
            while it is read, so memory does not grow with the database. With --output the \
            file is replaced only when complete (mode 0600).
            """)

    @Option(help: "The path to export (default: the root).") var path = "/"
    @OptionGroup var data: DataDirectoryOption
    @Option(help: "Write to this file instead of standard output.") var output: String?

    func validate() throws { _ = try Tool.path(path) }

    func run() throws {
        let location = try Tool.path(path)
        try Tool.run {
            let out = try OutputFile(path: output)
            let leaves: Int, bytes: Int
            if let (directory, format) = try data.localStore {
                (leaves, bytes) = try format.export(directory: directory, at: location) { bytes throws(MaintenanceError) in
                    try out.append(bytes)
                }
            } else {
                // Through the engine, from one snapshot, paged: the same bytes as from SQLite.
                let store = try data.openEngine()
                defer { store.close() }
                let summary = try TreeExport.run(engine: store, at: location) { bytes throws(MaintenanceError) in
                    try out.append(bytes)
                }
                (leaves, bytes) = (summary.leaves, summary.bytes)
            }
            try out.append(Array("\n".utf8))
            try out.commit()
            if let output { print("exported \(leaves) leaves (\(bytes) bytes) at \(location) to \(output)") }
        }
    }
}

/// `hearth import`: load a JSON export, streamed, in one transaction, with the server stopped.
struct ImportData: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "import",
        abstract: "Replace the data at a path with a JSON file (a Firebase export), with the server stopped.",
        discussion: """
            The file is read as a stream (memory does not grow with its size) and validated \
            as a REST PUT is: every key, the depth, string sizes; an error names the path. \
            Arrays become integer-keyed objects; null and empty objects write nothing. Server \
            values (.sv) and keys repeated within an object are refused. Everything is written \
            in one transaction: on any error nothing changes. The database must not be in use \
            (stop the server first). The change log is emptied, not sent the import: streams \
            that resume afterwards start from a fresh snapshot.
            """)

    @Argument(help: "The JSON file ('-' for standard input).") var file: String
    @Option(help: "The path to replace (default: the root).") var path = "/"
    @OptionGroup var data: DataDirectoryOption

    func validate() throws { _ = try Tool.path(path) }

    /// A store without a local directory (PostgreSQL): the document is validated exactly as
    /// in a data directory by importing it into a private staging store in
    /// `Engines.backupFormat` first, then written as one write through the
    /// engine (atomic, and the running nodes' streams hear of it like any write). A
    /// document larger than one write (`maxNodesPerWrite`) is refused: import it into SQLite
    /// and `hearth copy` the store.
    static func importThroughEngine(data: DataDirectoryOption, at location: DataPath, reader: inout JSONStreamReader) throws {
        let staging = FileManager.default.temporaryDirectory.appendingPathComponent("hearth-import-\(getpid())-\(UInt32.random(in: 0...UInt32.max))").path
        defer { try? FileManager.default.removeItem(atPath: staging) }
        let format = Engines.backupFormat
        try format.open(directory: staging).close()
        let leaves = try format.importTree(directory: staging, at: location, reader: &reader)
        let source = try format.open(directory: staging)
        defer { source.close() }
        let value = try source.readSync { try $0.exportValue(at: location) }
        let store = try data.openEngine()
        defer { store.close() }
        do {
            try store.writeSync(.set(WriteEntry(path: location, value: value == .null ? nil : value)), check: nil)
        } catch .tooLarge(let reason) {
            throw Tool.fail("the document is too large for one write (\(reason)): import it into a SQLite store and copy that (hearth copy, docs/scaling.md)")
        }
        print("imported \(leaves) leaves at \(location)")
    }

    func run() throws {
        let location = try Tool.path(path)
        try Tool.run {
            let input = try InputFile(path: file)
            var reader = input.jsonReader()
            if let (directory, format) = try data.localStore {
                let lock = try data.lock(.replacesData)
                defer { lock?.release() }
                let leaves = try format.importTree(directory: directory, at: location, reader: &reader)
                print("imported \(leaves) leaves at \(location)")
            } else {
                try Self.importThroughEngine(data: data, at: location, reader: &reader)
            }
        }
    }
}
