import HearthJSON
import HearthStore

/// Reads the change log (for stream resume, docs/design.md §5).
struct ChangeLogReader {
    let connection: SQLiteConnection

    func changes(after: Int64, limit: Int) throws(StoreError) -> (changes: [Change], oldestSeq: Int64?) {
        let scan = try scan(after: after, limit: limit, touching: nil)
        return (scan.changes, scan.oldestSeq)
    }

    /// The records after `after`, at most `limit`; with `location`, only those that touch it
    /// are decoded: the others cost a step and a byte comparison of their path, no JSON
    /// parse (a resuming stream in a busy namespace reads mostly other locations' changes).
    /// The touching records' data is measured before it is parsed; past `maxBytes` in all,
    /// the scan stops (`ChangeScan.tooLarge`).
    func scan(after: Int64, limit: Int, touching location: DataPath?, maxBytes: Int = .max) throws(StoreError) -> ChangeScan {
        let oldest = try connection.scalarInt("SELECT seq FROM changes ORDER BY seq LIMIT 1")
        let stmt = try connection.statement("SELECT seq, path, kind, data, at FROM changes WHERE seq > ? ORDER BY seq LIMIT ?")
        try stmt.reset([.integer(after), .integer(Int64(limit))])
        defer { try? stmt.reset() }
        let key = location.map { Array($0.storageKey.utf8) }
        var scan = ChangeScan(oldestSeq: oldest)
        var bytes = 0
        while try stmt.step() {
            let seq = stmt.int64(0)
            let touches = key.map { key in key.withUnsafeBufferPointer { key in stmt.withText(1) { ChangeScan.touches($0, key) } } } ?? true
            if touches {
                bytes += stmt.withText(3) { $0.count }
                if bytes > maxBytes {
                    scan.tooLarge = true
                    break
                }
            }
            scan.scanned += 1
            scan.lastSeq = seq
            if !touches { continue }
            let path = stmt.text(1)
            guard let kind = ChangeKind(rawValue: stmt.text(2)) else {
                throw StoreError.corrupt("change \(seq) has an unknown kind")
            }
            let data: JSONValue
            do {
                data = try JSONParser.parse(Array(stmt.text(3).utf8))
            } catch {
                throw StoreError.corrupt("change \(seq) has unreadable data")
            }
            scan.changes.append(Change(
                seq: seq,
                path: DataPath(uncheckedSegments: path.isEmpty ? [] : path.split(separator: "/").map(String.init)),
                kind: kind, data: data, at: stmt.int64(4)))
        }
        return scan
    }

    /// AUTOINCREMENT's high-water mark: survives trimming the whole log.
    func lastSeq() throws(StoreError) -> Int64 {
        try connection.scalarInt("SELECT seq FROM sqlite_sequence WHERE name = 'changes'") ?? 0
    }
}
