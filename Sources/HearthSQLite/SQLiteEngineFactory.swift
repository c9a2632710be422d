#if canImport(Glibc)
import Glibc
#endif
import HearthJSON
import HearthStore
import HearthSystem

/// How the embedded engine opens: `sqlite:<directory>` (the default, also for an
/// empty `--store`), one node, its data in a local directory.
public struct SQLiteEngineFactory: EngineFactory {
    public init() {}

    public var name: String { "sqlite" }
    public var textForm: String { "sqlite:<directory>" }
    public var isShared: Bool { false }

    public func location(parsing text: String, defaultDirectory: String) throws(StoreLocation.ParseError) -> StoreLocation? {
        if text.isEmpty { return .sqlite(directory: defaultDirectory) }
        guard text.hasPrefix("sqlite:") else { return nil }
        let directory = String(text.dropFirst("sqlite:".count))
        return .sqlite(directory: directory.isEmpty ? defaultDirectory : directory)
    }

    public func dataDirectory(of location: StoreLocation) -> String? { location.address }

    public func open(_ location: StoreLocation, options: StoreOptions, hooks: EngineHooks,
                     clock: @escaping @Sendable () -> Int64) throws(StoreError) -> any StorageEngine {
        try SQLiteTreeStore(directory: location.address, options: options, clock: clock, hooks: hooks)
    }

    public func unreachableAdvice(_ options: StoreOptions) -> String? { nil }

    /// A namespace's database is a file of its own in the data directory
    /// (`namespaces/<name>/hearth.sqlite`); the default namespace keeps `hearth.sqlite`.
    public func location(ofNamespace name: String, beside location: StoreLocation) -> StoreLocation {
        .sqlite(directory: location.address + "/" + Self.namespacesFolder + "/" + name)
    }

    /// Its database file is there.
    public func namespaceExists(_ name: String, beside location: StoreLocation) throws(StoreError) -> Bool {
        Syscall.exists(self.location(ofNamespace: name, beside: location).address + "/" + SQLiteTreeStore.fileName)
    }

    /// The folder of the data directory that holds the other namespaces' databases.
    public static let namespacesFolder = "namespaces"
}

extension SQLiteEngineFactory: LocalStoreFormat {
    public var databaseFileName: String { SQLiteTreeStore.fileName }

    public func backup(databaseAt source: String, to destination: String) throws(MaintenanceError) {
        try DatabaseFile.backup(databaseAt: source, to: destination)
    }

    public func verify(databaseAt path: String) throws(MaintenanceError) {
        _ = try DatabaseFile.verify(databaseAt: path)
    }

    public func restore(databaseAt source: String, intoDirectory directory: String, force: Bool) throws(MaintenanceError) {
        try DatabaseFile.restore(from: source, intoDirectory: directory, force: force)
    }

    public func open(directory: String) throws(StoreError) -> any StorageEngine {
        try SQLiteTreeStore(directory: directory)
    }

    public func export(directory: String, at path: DataPath,
                       sink: @escaping ([UInt8]) throws(MaintenanceError) -> Void) throws(MaintenanceError) -> (leaves: Int, bytes: Int) {
        let summary = try TreeExport.run(directory: directory, at: path, sink: sink)
        return (summary.leaves, summary.bytes)
    }

    public func importTree(directory: String, at path: DataPath, reader: inout JSONStreamReader) throws(MaintenanceError) -> Int {
        try TreeImport.run(directory: directory, at: path, reader: &reader).leaves
    }
}
