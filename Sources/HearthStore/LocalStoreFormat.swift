import HearthJSON

/// An engine that keeps a whole store in one database file in a local directory (the data
/// directory), whose file is also the form of a backup: `hearth backup` of any engine writes
/// one, `hearth restore` reads one (the operator's tools reach the file through
/// this, not by naming the engine).
public protocol LocalStoreFormat: EngineFactory {
    /// The database file's name in a data directory and in a backup directory.
    var databaseFileName: String { get }
    /// Writes a consistent, checked copy of the database file `source` to the new file
    /// `destination` (also while a server writes to it).
    func backup(databaseAt source: String, to destination: String) throws(MaintenanceError)
    /// Checks a database file (integrity, a known schema).
    func verify(databaseAt path: String) throws(MaintenanceError)
    /// Puts the database file `source` into `directory`: checked first, refused while in use
    /// and where a database exists unless `force`.
    func restore(databaseAt source: String, intoDirectory directory: String, force: Bool) throws(MaintenanceError)
    /// Opens (creating) the store in `directory`, without hooks.
    func open(directory: String) throws(StoreError) -> any StorageEngine
    /// Writes the value at `path` of the store in `directory` as JSON to `sink` from one
    /// snapshot, reading the file directly (also while a server runs).
    func export(directory: String, at path: DataPath,
                sink: @escaping ([UInt8]) throws(MaintenanceError) -> Void) throws(MaintenanceError) -> (leaves: Int, bytes: Int)
    /// Replaces the value at `path` of the store in `directory` with the JSON document
    /// `reader` reads, in one transaction; returns the leaves written.
    func importTree(directory: String, at path: DataPath, reader: inout JSONStreamReader) throws(MaintenanceError) -> Int
}
