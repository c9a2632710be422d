import HearthJSON
import HearthStore

/// Reads the change log (for stream resume, docs/design.md §5).
struct ChangeLogReader {
    let connection: SQLiteConnection

    func changes(after: Int64, limit: Int) throws(StoreError) -> (changes: [Change], oldestSeq: Int64?) {
        let oldest = try connection.scalarInt("SELECT seq FROM changes ORDER BY seq LIMIT 1")
        let stmt = try connection.statement("SELECT seq, path, kind, data, at FROM changes WHERE seq > ? ORDER BY seq LIMIT ?")
        try stmt.reset([.integer(after), .integer(Int64(limit))])
        defer { try? stmt.reset() }
        var result: [Change] = []
        while try stmt.step() {
            let path = stmt.text(1)
            guard let kind = ChangeKind(rawValue: stmt.text(2)) else {
                throw StoreError.corrupt("change \(stmt.int64(0)) has an unknown kind")
            }
            let data: JSONValue
            do {
                data = try JSONParser.parse(Array(stmt.text(3).utf8))
            } catch {
                throw StoreError.corrupt("change \(stmt.int64(0)) has unreadable data")
            }
            result.append(Change(
                seq: stmt.int64(0),
                path: DataPath(uncheckedSegments: path.isEmpty ? [] : path.split(separator: "/").map(String.init)),
                kind: kind, data: data, at: stmt.int64(4)))
        }
        return (result, oldest)
    }

    /// AUTOINCREMENT's high-water mark: survives trimming the whole log.
    func lastSeq() throws(StoreError) -> Int64 {
        try connection.scalarInt("SELECT seq FROM sqlite_sequence WHERE name = 'changes'") ?? 0
    }
}
