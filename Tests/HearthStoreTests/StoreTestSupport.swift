import HearthJSON
@_exported import HearthTesting
@testable import HearthSQLite
@testable import HearthStore

func path(_ s: String) -> DataPath {
    try! DataPath(string: s)
}

func obj(_ pairs: KeyValuePairs<String, JSONValue>) -> JSONValue {
    .object(Dictionary(uniqueKeysWithValues: pairs.map { ($0.key, $0.value) }))
}

extension SQLiteTreeStore {
    func get(_ p: String) throws -> JSONValue {
        try readSync { try $0.value(at: path(p)) }
    }

    @discardableResult
    func put(_ p: String, _ value: JSONValue?) throws -> WriteOutcome {
        try writeSync(.set(WriteEntry(path: path(p), value: value)))
    }
}

extension SQLiteConnection {
    /// A new database file in `directory`, migrated to schema `version` only (an old
    /// release's file), open for the test to fill in.
    static func atSchema(_ version: Int, in directory: String) throws -> (database: String, connection: SQLiteConnection) {
        let database = directory + "/" + SQLiteTreeStore.fileName
        let connection = try SQLiteConnection(path: database, mode: .readWriteCreate)
        for migration in Schema.migrations.prefix(version) { try connection.execute(migration) }
        try connection.execute("PRAGMA user_version = \(version)")
        return (database, connection)
    }
}
