import Dispatch
import HearthJSON
import HearthStore

/// Building a query index without holding the cluster's writes: the children are read a
/// slice at a time, each slice in its own snapshot (`REPEATABLE READ`) on this node's
/// writer between its write batches and without the ordering lock, so no other node's
/// writes wait for them. Writes meanwhile (on any node) do not keep the unfinished index
/// in step; the build catches up from the change log instead, for the children the
/// changes since its first snapshot touched: once without the ordering lock, then, under
/// it, for the few changes left, in the transaction that marks the index built. From that
/// commit on, every node's writer keeps it in step.
///
/// Built in one transaction under the ordering lock, with a round trip or more per child,
/// a location of 64,000 children held every write of every node for the whole build.
///
/// One node builds a given index at a time: the build holds a session advisory lock on it,
/// and each step checks that it still runs in the session that took it. A change that
/// wrote the location itself or above it, or a change log trimmed past the build's start,
/// gives the build up; the next query that would use the index asks for it again.
extension PostgresEngine {
    /// Children one slice reads, at most (their keys read ahead, a window of rows per round
    /// trip, on this node's writer):
    /// the fewer of this and `StoreOptions.queryIndexChildrenPerSlice`.
    static let maxIndexChildrenPerSlice = 250
    /// Changes the catch-up reads per round trip.
    static let indexCatchUpChangesPerRead = 1_000
    /// After a build's start is refused, queries on this node do not ask again for this
    /// long: each ask is a round trip on the writer, where writes wait, and while another
    /// node builds every query here would make one.
    static let indexRetryMilliseconds: Int64 = 1_000

    /// Where a build stands between its steps (on `writerQueue`).
    struct IndexBuild: Sendable {
        let location: DataPath
        let spec: String
        /// The session that holds the build's advisory lock.
        let session: Int64
        /// The change the build's first snapshot included: later ones are caught up.
        var caughtUpThrough: Int64
        var cursor: TreeKeys.ChildKeyCursor
        var slicesDone = false
    }

    /// Asks the writer to build the index of `path` by `spec` (deduplicated on this node).
    func requestIndex(at path: DataPath, spec: String) {
        let id = path.storageKey + "\u{0}" + spec
        let now = clock()
        guard indexRefusals.withLock({ ($0[id] ?? .min) <= now }) else { return }
        guard indexRequests.withLock({ $0.insert(id).inserted }) else { return }
        writerQueue.async { self.runIndexBuild(nil, path: path, spec: spec, id: id) }
    }

    /// Builds the index now (tests, tools); returns when it is built, given up, or refused
    /// (now or in the last `indexRetryMilliseconds`).
    public func buildQueryIndex(at path: DataPath, spec: String) {
        let id = path.storageKey + "\u{0}" + spec
        requestIndex(at: path, spec: spec)
        // Each step queues the next before it returns, so each wait runs at least one.
        repeat { writerQueue.sync {} } while indexRequests.withLock({ $0.contains(id) })
    }

    /// One step of a requested build; queues the next behind the writes queued meanwhile.
    private func runIndexBuild(_ build: IndexBuild?, path: DataPath, spec: String, id: String) {
        let next = try? indexBuildStep(build, path: path, spec: spec)
        if let next {
            writerQueue.async { self.runIndexBuild(next, path: path, spec: spec, id: id) }
            return
        }
        if build == nil {
            let now = clock()
            indexRefusals.withLock { refusals in
                refusals = refusals.filter { $0.value > now }  // the lapsed ones
                refusals[id] = now + Self.indexRetryMilliseconds
            }
        }
        _ = indexRequests.withLock { $0.remove(id) }
    }

    /// Runs one step of the build of the index of `path` by `spec` (on `writerQueue`): the
    /// start when `build` is nil, else its next slice, or its catch-up and end. Returns
    /// where it stands, or nil when it is built or given up (its advisory lock released).
    func indexBuildStep(_ build: IndexBuild?, path: DataPath, spec: String) throws(StoreError) -> IndexBuild? {
        let connection = try writerConnection()
        guard var build else { return try startIndexBuild(path, spec: spec, connection: connection) }
        do {
            guard try connection.query("SELECT pg_backend_pid()").int64(0, 0) == build.session else {
                return nil  // the connection was reset: the lock went with the session
            }
            if !build.slicesDone {
                try indexSlice(&build, connection: connection)
                return build
            }
            // Up to the changes so far without the ordering lock, then the rest under it (and
            // built), unless the first gave the build up.
            if try catchUp(&build, orderingLock: false, connection: connection) {
                _ = try catchUp(&build, orderingLock: true, connection: connection)
            }
            try releaseIndexLock(build, connection: connection)
            return nil
        } catch {
            try? connection.execute("ROLLBACK")
            indexes.invalidate()
            try? releaseIndexLock(build, connection: connection)
            throw error
        }
    }

    /// The build's start: its advisory lock (nil when another node holds it, or the index
    /// is built, or there are `QueryIndex.maxIndexes`), its first snapshot's change, and the
    /// rows an earlier unfinished build left, cleared.
    private func startIndexBuild(_ path: DataPath, spec: String, connection: PGConnection) throws(StoreError) -> IndexBuild? {
        let lock = try connection.query("SELECT pg_try_advisory_lock(hashtextextended($1, 0)), pg_backend_pid()",
                                        [.text(Self.indexLockName(path, spec))])
        guard lock.text(0, 0) == "t" else { return nil }
        let build = IndexBuild(location: path, spec: spec, session: lock.int64(0, 1), caughtUpThrough: 0,
                               cursor: TreeKeys.ChildKeyCursor(at: path))
        do {
            try indexes.refresh(connection)
            guard !indexes.isBuilt(path, spec: spec), indexes.count < QueryIndex.maxIndexes else {
                try releaseIndexLock(build, connection: connection)
                return nil
            }
            try connection.execute("BEGIN ISOLATION LEVEL REPEATABLE READ")
            var started = build
            started.caughtUpThrough = try connection.query("SELECT value FROM hearth_meta WHERE key = 'last_seq'").int64(0, 0)
            _ = try connection.query("DELETE FROM query_index WHERE location = $1 AND spec = $2", [.text(path.storageKey), .text(spec)])
            try connection.execute("COMMIT")
            return started
        } catch {
            try? connection.execute("ROLLBACK")
            try? releaseIndexLock(build, connection: connection)
            throw error
        }
    }

    /// The next slice of children, from the cursor, in the build's own snapshot.
    private func indexSlice(_ build: inout IndexBuild, connection: PGConnection) throws(StoreError) {
        try connection.execute("BEGIN ISOLATION LEVEL REPEATABLE READ")
        let view = PostgresTreeView(connection: connection)
        let probes = view.walkProbes()
        var keys: [String] = []
        for _ in 0..<max(1, min(Self.maxIndexChildrenPerSlice, options.queryIndexChildrenPerSlice)) {
            guard let key = try build.cursor.next(firstPath: { lower, inclusive, upper throws(StoreError) in
                try probes.first(lower, inclusive, upper)
            }) else {
                build.slicesDone = true
                break
            }
            keys.append(key)
        }
        try PostgresQueryIndex.write(existing: keys, of: build.location, spec: build.spec, view: view)
        try connection.execute("COMMIT")
    }

    /// Brings the rows up to date with the changes since `build.caughtUpThrough` that
    /// touched the location's children. Under the ordering lock (no write can commit
    /// meanwhile), it then marks the index built in the same transaction. False when the
    /// build must be given up: a change wrote the location or above it, or the log no
    /// longer holds every change since.
    private func catchUp(_ build: inout IndexBuild, orderingLock: Bool, connection: PGConnection) throws(StoreError) -> Bool {
        if orderingLock {
            try connection.execute("BEGIN")
            _ = try connection.query(Self.orderingLockSQL)
            try indexes.refresh(connection)
        } else {
            try connection.execute("BEGIN ISOLATION LEVEL REPEATABLE READ")
        }
        let view = PostgresTreeView(connection: connection)
        var touched = Set<JSONKey>()
        var after = build.caughtUpThrough
        while true {
            let scan = try view.changes(after: after, limit: Self.indexCatchUpChangesPerRead, touching: build.location)
            guard let last = scan.lastSeq else { break }
            guard let oldest = scan.oldestSeq, oldest <= after + 1 else {
                try connection.execute("ROLLBACK")
                return false
            }
            for change in scan.changes {
                guard let children = change.touchedChildren(of: build.location) else {
                    try connection.execute("ROLLBACK")
                    return false
                }
                touched.formUnion(children)
            }
            after = last
        }
        try PostgresIndexMaintainer.update(build.location, spec: build.spec, keys: touched.map(\.string), view: view)
        if orderingLock {
            guard !indexes.isBuilt(build.location, spec: build.spec), indexes.count < QueryIndex.maxIndexes else {
                try connection.execute("ROLLBACK")
                return false
            }
            try indexes.markBuilt(build.location, spec: build.spec, connection: connection)
        }
        try connection.execute("COMMIT")
        build.caughtUpThrough = after
        return true
    }

    private func releaseIndexLock(_ build: IndexBuild, connection: PGConnection) throws(StoreError) {
        _ = try connection.query("SELECT pg_advisory_unlock(hashtextextended($1, 0))", [.text(Self.indexLockName(build.location, build.spec))])
    }

    /// The advisory lock's name for an index (keys hold no control character).
    private static func indexLockName(_ path: DataPath, _ spec: String) -> String {
        path.storageKey + "\u{1}" + spec
    }
}
