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
