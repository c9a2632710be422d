import Dispatch
import HearthJSON
import HearthStore

/// Building query indexes on the writer, a slice of children at a time.
extension SQLiteTreeStore {
    /// Asks the writer to build the index of `path` by `spec` (deduplicated). The build runs
    /// a slice of `StoreOptions.queryIndexChildrenPerSlice` children at a time, each in its
    /// own transaction; each slice queues the next behind the writes queued meanwhile.
    func requestIndex(at path: DataPath, spec: String) {
        let id = Self.indexRequestID(path, spec)
        guard indexRequests.withLock({ $0.insert(id).inserted }) else { return }
        writerQueue.async { self.buildIndexSlice(path, spec: spec, id: id, start: true) }
    }

    private static func indexRequestID(_ path: DataPath, _ spec: String) -> JSONKey {
        JSONKey(path.storageKey + "\u{0}" + spec)
    }

    /// One slice of a requested build (on `writerQueue`); queues the next unless done.
    private func buildIndexSlice(_ path: DataPath, spec: String, id: JSONKey, start: Bool) {
        // A failed slice was rolled back and its build forgotten: the next query asks again.
        if (try? indexSlice(path, spec: spec, start: start)) ?? true {
            _ = indexRequests.withLock { $0.remove(id) }
        } else {
            writerQueue.async { self.buildIndexSlice(path, spec: spec, id: id, start: false) }
        }
    }

    /// One slice of the build of the index of `path` by `spec` in its own transaction (on
    /// `writerQueue`); true when the build is done or given up. On failure the transaction
    /// is rolled back and the writer forgets the build.
    private func indexSlice(_ path: DataPath, spec: String, start: Bool) throws -> Bool {
        guard let connection = writer, let indexes = queryIndexes else { throw StoreError.closed }
        if start && !indexes.isBuilt(path.storageKey, spec) && indexes.maintained.count >= QueryIndex.maxIndexes { return true }
        try connection.execute("BEGIN IMMEDIATE")
        do {
            let done = try indexes.step(location: path, spec: spec, children: options.queryIndexChildrenPerSlice,
                                        start: start, connection: connection)
            // No sync of the WAL for a slice: nobody waits on an index being durable. The
            // next batch's sync covers its frames; a crash before it loses a suffix of the
            // WAL, which leaves at most an unfinished build (its rows cleared by the next).
            _ = try WALWriteCoalescing.commitDeferringSync(on: connection) { () throws(StoreError) in
                try connection.execute("COMMIT")
            }
            return done
        } catch {
            try? connection.execute("ROLLBACK")
            try? indexes.reload(connection: connection)
            throw error
        }
    }

    /// Builds the index now (tests, tools); returns when it is built or given up.
    public func buildQueryIndex(at path: DataPath, spec: String) {
        let id = Self.indexRequestID(path, spec)
        requestIndex(at: path, spec: spec)
        // Each slice queues the next before it returns, so each wait runs at least one.
        repeat { writerQueue.sync {} } while indexRequests.withLock({ $0.contains(id) })
    }

    /// Runs one slice of the build of the index of `path` by `spec` now, on the writer;
    /// true when the build is done or given up (tests: writes between slices).
    func buildQueryIndexSlice(at path: DataPath, spec: String, start: Bool) throws -> Bool {
        try writerQueue.sync { try indexSlice(path, spec: spec, start: start) }
    }
}
