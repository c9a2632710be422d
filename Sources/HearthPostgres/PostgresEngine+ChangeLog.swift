import Dispatch
import HearthJSON
import HearthStore
import Synchronization

/// The change feed's reads and its trimming (docs/design.md §3).
extension PostgresEngine {
    public func changes(after: Int64, limit: Int) throws -> (changes: [Change], oldestSeq: Int64?) {
        try readSync { try $0.changes(after: after, limit: limit) }
    }

    static let trimEveryWrites = 256
    static let trimChunkRows: Int64 = 2_000

    /// Deletes the oldest feed records past `changeLogRetention` or older than
    /// `changeLogMaxAge`, at most `trimChunkRows` at a time. Any node may trim; the rows
    /// deleted are the same whichever does.
    @discardableResult
    func trimChangeLog(_ connection: PGConnection, lastSeq: Int64, now: Int64) throws(StoreError) -> Int {
        let keepFrom = lastSeq - Int64(options.changeLogRetention)
        let oldestAllowed = now - Int64(options.changeLogMaxAge * 1000)
        let first = try connection.query("SELECT min(seq) FROM changes")
        guard !first.isNull(0, 0) else { return 0 }
        let chunkEnd = first.int64(0, 0) + Self.trimChunkRows
        let young = try connection.query("SELECT min(seq) FROM changes WHERE seq < $1 AND at >= $2", [.int(chunkEnd), .int(oldestAllowed)])
        let firstYoung = young.isNull(0, 0) ? chunkEnd : young.int64(0, 0)
        let cutoff = min(max(keepFrom + 1, firstYoung), chunkEnd)
        guard cutoff > first.int64(0, 0) else { return 0 }
        return try connection.query("DELETE FROM changes WHERE seq < $1", [.int(cutoff)]).affectedRows
    }

    /// How long a node's last batch mark is kept after its last write, ms (a mark matters
    /// only for the moments after its batch; older ones belong to nodes that are gone).
    static let batchMarkMilliseconds: Int64 = 86_400_000

    @discardableResult
    public func trimChangeLog() -> Int {
        _ = try? withAux { connection in
            try connection.query("DELETE FROM hearth_batches WHERE at < $1", [.int(clock() - Self.batchMarkMilliseconds)])
        }
        return (try? withAux { connection in
            let last = try connection.query("SELECT value FROM hearth_meta WHERE key = 'last_seq'").int64(0, 0)
            var deleted = 0
            while true {
                let step = try trimChangeLog(connection, lastSeq: last, now: clock())
                deleted += step
                if step == 0 { return deleted }
            }
        }) ?? 0
    }
}
