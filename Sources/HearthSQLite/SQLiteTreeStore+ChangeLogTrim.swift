import HearthStore

/// Keeping the change log within its bounds, on the writer.
extension SQLiteTreeStore {
    /// Writes between two trims of the change log on the write path.
    static let trimEveryWrites = 256
    /// Rows one trim deletes at most, so one trim never holds the writer for long; a
    /// backlog is worked off over later trims.
    static let trimChunkRows = 2_000

    /// Keeps the change log within `changeLogRetention` rows and `changeLogMaxAge`
    /// (docs/design.md §4), deleting at most `trimChunkRows` oldest rows. Runs on the
    /// writer after a batch was acknowledged, and from `trimChangeLog()` when no writes
    /// come. Returns the rows deleted.
    ///
    /// The rows to delete are a prefix in `seq` order: those past the count, and those
    /// older than the age limit (`at` grows with `seq` while the clock moves forward; after
    /// a clock step back, old rows behind a younger one wait until it ages too). So each
    /// trim reads only the prefix it deletes: the first young row by an ordered walk, then
    /// one range delete. (It used to ask `seq <= ? OR at < ? ... LIMIT`, which walked the
    /// whole log whenever fewer rows than the limit matched: ~10 % of the writer's time
    /// under a steady create load.)
    @discardableResult
    func trimChangeLog(_ connection: SQLiteConnection, lastSeq: Int64, now: Int64) -> Int {
        let keepFrom = lastSeq - Int64(options.changeLogRetention)
        let oldestAllowed = now - Int64(options.changeLogMaxAge * 1000)
        do {
            guard let first = try connection.scalarInt("SELECT seq FROM changes ORDER BY seq LIMIT 1") else { return 0 }
            // Only the chunk's range is walked: a cutoff past it would be capped anyway.
            let chunkEnd = first + Int64(Self.trimChunkRows)
            let young = try connection.statement("SELECT seq FROM changes WHERE seq < ? AND at >= ? ORDER BY seq LIMIT 1")
            try young.reset([.integer(chunkEnd), .integer(oldestAllowed)])
            let firstYoung = try young.step() ? young.int64(0) : chunkEnd
            try young.reset()
            let cutoff = min(max(keepFrom + 1, firstYoung), chunkEnd)
            guard cutoff > first else { return 0 }
            try connection.statement("DELETE FROM changes WHERE seq < ?").run([.integer(cutoff)])
            return Int(connection.changes)
        } catch {
            // Trimming is housekeeping: a failure is retried at the next trim.
            return 0
        }
    }

    /// Trims the change log by count and age on the writer queue (call it periodically: the
    /// server does every `StoreOptions.changeLogTrimInterval`). Returns the rows deleted.
    @discardableResult
    public func trimChangeLog() -> Int {
        writerQueue.sync {
            guard let writer else { return 0 }
            let last = (try? ChangeLogReader(connection: writer).lastSeq()) ?? 0
            var deleted = 0
            while true {
                let step = trimChangeLog(writer, lastSeq: last, now: clock())
                deleted += step
                if step == 0 { return deleted }
            }
        }
    }
}
