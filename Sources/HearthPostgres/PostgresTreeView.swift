import HearthJSON
import HearthStore

/// `TreeView` over one PostgreSQL connection inside a transaction: a reader's
/// REPEATABLE READ snapshot, or the writer's transaction (which sees the batch's earlier
/// writes). The same row layout as the SQLite engine (one row per leaf, docs/design.md §4).
struct PostgresTreeView: TreeView {
    let connection: PGConnection
    /// Hears of a query an index would have served (readers pass the engine's request to
    /// build it; the writer's and the feed's views pass nothing).
    var onMissingIndex: ((DataPath, String) -> Void)? = nil
    /// The writer's batch: the lease its fenced writes are checked against. Nil for
    /// readers, whose views never commit (every fence fails there).
    var lease: BatchLease? = nil

    /// The fence, in the writer's transaction: the lease (the fence's, else this node's)
    /// must be live by its row, which stays locked until the batch ends; an onDisconnect
    /// record must be held under it, and is deleted here, so one transaction in the
    /// deployment writes its operation.
    func holds(_ fence: WriteFence) throws(StoreError) -> Bool {
        guard let lease else { return false }
        let epoch = fence.epoch ?? lease.epoch
        guard try lease.isLive(epoch, connection: connection) else { return false }
        guard let session = fence.session else { return true }
        return try connection.query("DELETE FROM on_disconnect WHERE session = $1 AND position = $2 AND node = $3",
                                    [.text(session), .int(fence.position), .text(epoch)]).affectedRows > 0
    }

    /// From the location's rows for key-order queries with a limit, from its index when one
    /// is built (`PostgresQueryIndex`), else in memory.
    func query(_ query: TreeQuery, at path: DataPath) throws(StoreError) -> JSONValue {
        if let answer = try childrenInKeyOrder(query, at: path) { return answer }
        if let indexed = try PostgresQueryIndex.query(query, at: path, view: self) { return indexed }
        if let spec = QueryIndex.spec(of: query.orderBy), query.limit != nil { onMissingIndex?(path, spec) }
        return query.apply(to: query.orderBy == .priority ? try exportValue(at: path) : try value(at: path))
    }

    static let leafColumns = "kind, ival, dval, sval"

    /// A leaf from the four columns starting at `column`.
    static func decode(_ result: PGResult, row: Int, column: Int) throws(StoreError) -> JSONValue {
        let kind = result.int64(row, column)
        switch LeafKind(rawValue: kind) {
        case .string: return .string(result.text(row, column + 3))
        case .int: return .int(result.int64(row, column + 1))
        case .double: return .double(result.double(row, column + 2))
        case .bool: return .bool(result.int64(row, column + 1) != 0)
        case nil: throw .corrupt("unknown leaf kind \(kind)")
        }
    }

    /// The parameters of a leaf's four columns.
    static func bindings(_ row: LeafRow) -> [PGValue] {
        switch row.value {
        case .string(let s): return [.int(row.kind.rawValue), .null, .null, .text(s)]
        case .int(let i): return [.int(row.kind.rawValue), .int(i), .null, .null]
        case .double(let d): return [.int(row.kind.rawValue), .null, .double(d), .null]
        case .bool(let b): return [.int(row.kind.rawValue), .int(b ? 1 : 0), .null, .null]
        case .null, .array, .object: return [.int(0), .null, .null, .null]
        }
    }

    func leaf(at path: DataPath) throws(StoreError) -> JSONValue? {
        let result = try connection.query("SELECT \(Self.leafColumns) FROM nodes WHERE path = $1", [.text(path.storageKey)])
        guard result.rowCount > 0 else { return nil }
        return try Self.decode(result, row: 0, column: 0)
    }

    /// Every leaf at and below `path`, in path order, with the length of the prefix that
    /// makes their paths relative.
    private func subtree(_ path: DataPath) throws(StoreError) -> (PGResult, Int) {
        if path.isRoot {
            return (try connection.query("SELECT path, \(Self.leafColumns) FROM nodes ORDER BY path"), 0)
        }
        let range = TreeKeys.descendantRange(path.storageKey)
        let result = try connection.query(
            "SELECT path, \(Self.leafColumns) FROM nodes WHERE path >= $1 AND path < $2 ORDER BY path",
            [.text(range.lower), .text(range.upper)])
        return (result, range.lower.utf8.count)
    }

    func value(at path: DataPath) throws(StoreError) -> JSONValue {
        if let leaf = try leaf(at: path) { return leaf }
        let (result, prefix) = try subtree(path)
        var rows: [(segments: ArraySlice<Substring>, value: JSONValue)] = []
        rows.reserveCapacity(result.rowCount)
        for row in 0..<result.rowCount {
            let full = result.text(row, 0)
            rows.append((LeafRow.segments(full.utf8.dropFirst(prefix)), try Self.decode(result, row: row, column: 1)))
        }
        return LeafRow.assemble(rows)
    }

    /// One indexed probe per child (`TreeKeys.childKeys`), read ahead: a round trip per
    /// window of rows rather than per child.
    func childKeys(at path: DataPath) throws(StoreError) -> [String] {
        let probes = walkProbes()
        return try TreeKeys.childKeys(at: path) { lower, inclusive, upper throws(StoreError) in try probes.first(lower, inclusive, upper) }
    }

    func exists(at path: DataPath) throws(StoreError) -> Bool {
        if path.isRoot {
            return try connection.query("SELECT 1 FROM nodes LIMIT 1").rowCount > 0
        }
        if try leaf(at: path) != nil { return true }
        let range = TreeKeys.descendantRange(path.storageKey)
        return try connection.query("SELECT 1 FROM nodes WHERE path >= $1 AND path < $2 LIMIT 1",
                                    [.text(range.lower), .text(range.upper)]).rowCount > 0
    }

    func lastChangeSeq() throws(StoreError) -> Int64 {
        let result = try connection.query("SELECT value FROM hearth_meta WHERE key = 'last_seq'")
        return result.rowCount > 0 ? result.int64(0, 0) : 0
    }

    func changes(after seq: Int64, limit: Int) throws(StoreError) -> (changes: [Change], oldestSeq: Int64?) {
        let oldest = try connection.query(Self.oldestChangeSQL)
        let result = try connection.query(Self.changesAfterSQL, [.int(seq), .int(Int64(limit))])
        return try Self.changes(result, oldest: oldest)
    }

    /// Only the records that touch `location` are read whole and decoded. A first
    /// statement reads every record's path and the size of its data, a second the data of
    /// the touching ones within `maxBytes`: the scan never holds the other records' data,
    /// nor more than `maxBytes` of the touching ones'. Both see the read's one snapshot.
    func changes(after seq: Int64, limit: Int, touching location: DataPath, maxBytes: Int) throws(StoreError) -> ChangeScan {
        let oldest = try connection.query(Self.oldestChangeSQL)
        let heads = try connection.query(Self.changeHeadsAfterSQL, [.int(seq), .int(Int64(limit))])
        let key = Array(location.storageKey.utf8)
        var scan = ChangeScan(oldestSeq: oldest.isNull(0, 0) ? nil : oldest.int64(0, 0))
        var touching: [Int] = []  // rows of `heads`
        var bytes = 0
        for row in 0..<heads.rowCount {
            if ChangeScan.touches(Array(heads.text(row, 1).utf8), key) {
                bytes += Int(heads.int64(row, 3))
                if bytes > maxBytes {
                    scan.tooLarge = true
                    break
                }
                touching.append(row)
            }
            scan.scanned += 1
            scan.lastSeq = heads.int64(row, 0)
        }
        if touching.isEmpty { return scan }
        let seqs = touching.map { String(heads.int64($0, 0)) }.joined(separator: ",")
        let data = try connection.query(Self.changeDataSQL, [.text("{" + seqs + "}")])
        guard data.rowCount == touching.count else { throw .corrupt("change-log records vanished within one snapshot") }
        for (index, row) in touching.enumerated() {
            let seq = heads.int64(row, 0)
            guard data.int64(index, 0) == seq else { throw .corrupt("change \(seq)'s data was not read within its snapshot") }
            scan.changes.append(try Self.change(seq: seq, path: heads.text(row, 1), kind: heads.text(row, 2),
                                                data: data.text(index, 1), at: heads.int64(row, 4)))
        }
        return scan
    }

    /// `changesAfterSQL` with the size of each record's data instead of the data.
    static let changeHeadsAfterSQL = "SELECT seq, path, kind, octet_length(data), at FROM changes WHERE seq > $1 ORDER BY seq LIMIT $2"
    /// The data of the records numbered in the array `$1`, in order.
    static let changeDataSQL = "SELECT seq, data FROM changes WHERE seq = ANY($1::bigint[]) ORDER BY seq"

    static let oldestChangeSQL = "SELECT min(seq) FROM changes"

    /// The changes after number `$1`, at most `$2`, in order (`changes(after:limit:)`).
    static let changesAfterSQL = "SELECT seq, path, kind, data, at FROM changes WHERE seq > $1 ORDER BY seq LIMIT $2"

    /// The changes in `result` (`changesAfterSQL`'s columns) and the oldest number `oldest` read.
    static func changes(_ result: PGResult, oldest: PGResult) throws(StoreError) -> (changes: [Change], oldestSeq: Int64?) {
        var changes: [Change] = []
        changes.reserveCapacity(result.rowCount)
        for row in 0..<result.rowCount {
            changes.append(try Self.change(result, row: row))
        }
        return (changes, oldest.isNull(0, 0) ? nil : oldest.int64(0, 0))
    }

    static func change(_ result: PGResult, row: Int) throws(StoreError) -> Change {
        try change(seq: result.int64(row, 0), path: result.text(row, 1), kind: result.text(row, 2), data: result.text(row, 3),
                   at: result.int64(row, 4))
    }

    /// A record from its columns (`changesAfterSQL`'s).
    static func change(seq: Int64, path: String, kind: String, data: String, at: Int64) throws(StoreError) -> Change {
        guard let kind = ChangeKind(rawValue: kind) else { throw .corrupt("change \(seq) has an unknown kind") }
        let value: JSONValue
        do {
            value = try JSONParser.parse(Array(data.utf8))
        } catch {
            throw .corrupt("change \(seq) has unreadable data")
        }
        return Change(seq: seq, path: DataPath(uncheckedSegments: path.isEmpty ? [] : path.split(separator: "/").map(String.init)),
                      kind: kind, data: value, at: at)
    }

    func leafRows(at path: DataPath, after: String?, limit: Int) throws(StoreError) -> [(path: String, value: JSONValue)] {
        if after == nil, let leaf = try leaf(at: path) { return [(path.storageKey, leaf)] }
        let result: PGResult
        if path.isRoot {
            result = try connection.query("SELECT path, \(Self.leafColumns) FROM nodes WHERE path > $1 ORDER BY path LIMIT $2",
                                          [.text(after ?? ""), .int(Int64(limit))])
        } else {
            let range = TreeKeys.descendantRange(path.storageKey)
            result = try connection.query("SELECT path, \(Self.leafColumns) FROM nodes WHERE path > $1 AND path < $2 ORDER BY path LIMIT $3",
                                          [.text(after ?? range.lower), .text(range.upper), .int(Int64(limit))])
        }
        var rows: [(path: String, value: JSONValue)] = []
        rows.reserveCapacity(result.rowCount)
        for row in 0..<result.rowCount { rows.append((result.text(row, 0), try Self.decode(result, row: row, column: 1))) }
        return rows
    }

    func priority(at path: DataPath) throws(StoreError) -> JSONValue? {
        let result = try connection.query("SELECT \(Self.leafColumns) FROM priorities WHERE path = $1", [.text(path.storageKey)])
        return result.rowCount > 0 ? try Self.decode(result, row: 0, column: 0) : nil
    }

    /// The value with its priorities laid over it (`format=export`).
    func exportValue(at path: DataPath) throws(StoreError) -> JSONValue {
        var value = try value(at: path)
        let result: PGResult
        let prefix: Int
        if path.isRoot {
            result = try connection.query("SELECT path, \(Self.leafColumns) FROM priorities")
            prefix = 0
        } else {
            let key = path.storageKey
            let range = TreeKeys.descendantRange(key)
            result = try connection.query("""
                SELECT path, \(Self.leafColumns) FROM priorities WHERE path = $1
                UNION ALL SELECT path, \(Self.leafColumns) FROM priorities WHERE path >= $2 AND path < $3
                """, [.text(key), .text(range.lower), .text(range.upper)])
            prefix = key.utf8.count
        }
        for row in 0..<result.rowCount {
            let full = result.text(row, 0)
            let relative = full.utf8.count > prefix ? LeafRow.segments(full.utf8.dropFirst(prefix + (prefix == 0 ? 0 : 1))) : []
            value = TreeKeys.attach(try Self.decode(result, row: row, column: 1), at: relative.map(String.init)[...], in: value)
        }
        return value
    }
}

/// One write batch's view of the leases its fenced writes depend on: each lease is asked
/// once per batch (its row then stays locked until the batch ends, `NodeLease.liveSQL`).
/// Confined to the writer's queue.
final class BatchLease {
    /// This node's lease when the batch began.
    let epoch: String
    /// "Now" for the lease check (`NodeLease.now(_:)`).
    let now: PGValue
    private var answers: [String: Bool] = [:]

    init(epoch: String, now: PGValue) {
        (self.epoch, self.now) = (epoch, now)
    }

    func isLive(_ epoch: String, connection: PGConnection) throws(StoreError) -> Bool {
        if let known = answers[epoch] { return known }
        let live = try connection.query(NodeLease.liveSQL, [.text(epoch), now]).rowCount > 0
        answers[epoch] = live
        return live
    }
}
