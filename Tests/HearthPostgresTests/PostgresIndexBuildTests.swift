import HearthJSON
import HearthStore
import HearthTesting
import Synchronization
import Testing
@testable import HearthPostgres

/// A query index built a slice at a time, without the ordering lock: writes on either node
/// between the slices are caught up from the change log, a write of the location gives the
/// build up, and one node builds a given index at a time.
extension PostgresQueryIndexTests {
    func slicedEngines() throws -> (PostgresEngine, PostgresEngine) {
        let url = try PostgresCluster.shared().makeDatabase()
        var options = StoreOptions()
        options.queryIndexChildrenPerSlice = 2
        return (try PostgresEngine(url: url, options: options), try PostgresEngine(url: url))
    }

    func step(_ engine: PostgresEngine, _ build: PostgresEngine.IndexBuild?, at location: DataPath) throws -> PostgresEngine.IndexBuild? {
        try engine.writerQueue.sync { try engine.indexBuildStep(build, path: location, spec: "score") }
    }

    /// What the index answers (nil when it is not built) and what the data answers, on `engine`.
    func answers(_ engine: PostgresEngine, _ query: TreeQuery, at location: DataPath) throws -> (JSONValue?, JSONValue) {
        try engine.readSync { view in
            (try PostgresQueryIndex.query(query, at: location, view: view as! PostgresTreeView),
             query.apply(to: try view.value(at: location)))
        }
    }

    @Test func writesOnEitherNodeBetweenTheSlicesAreCaughtUp() throws {
        let (a, b) = try slicedEngines()
        defer { a.close(); b.close() }
        let location = path("items")
        for i in 0..<30 {
            try a.writeSync(.set(WriteEntry(path: path("items/k\(i + 10)/score"), value: Self.score(i))), check: nil)
        }
        var build = try #require(try step(a, nil, at: location))
        var round = 0
        while !build.slicesDone || round < 40 {
            // Children before and after the cursor: changed, removed, added, on both nodes.
            let writer = round % 2 == 0 ? b : a
            let key = "k\((round * 7) % 45)"
            switch round % 4 {
            case 0: try writer.writeSync(.set(WriteEntry(path: path("items/\(key)"), value: nil)), check: nil)
            case 1: try writer.writeSync(.set(WriteEntry(path: path("items/\(key)/score"), value: Self.score(round * 3))), check: nil)
            case 2: try writer.writeSync(.update(base: location, entries: [
                WriteEntry(path: path("items/\(key)/score"), value: Self.score(round)),
                WriteEntry(path: path("items/\(key)0/score"), value: .int(3)),
            ]), check: nil)
            default: try writer.writeSync(.set(WriteEntry(path: path("items/\(key)/score/deep"), value: .int(1))), check: nil)
            }
            round += 1
            if !build.slicesDone { build = try #require(try step(a, build, at: location)) }
        }
        #expect(try answers(a, TreeQuery(orderBy: .child(path("score")), limit: .first(3)), at: location).0 == nil, "not built yet")
        #expect(try step(a, build, at: location) == nil, "caught up and built")
        for engine in [a, b] {
            for query in queries(round) where query.orderBy == .child(path("score")) {
                let (indexed, memory) = try answers(engine, query, at: location)
                #expect(indexed == memory, "\(query)")
            }
        }
        let rows = try a.readSync { view in
            try (view as! PostgresTreeView).connection.query("SELECT count(*) FROM query_index WHERE location = 'items' AND spec = 'score'").int64(0, 0)
        }
        #expect(rows == Int64(try a.readSync { try $0.childKeys(at: location).count }))
    }

    @Test func aWriteOfTheLocationGivesTheBuildUp() throws {
        let (a, b) = try slicedEngines()
        defer { a.close(); b.close() }
        let location = path("items")
        for i in 0..<10 { try a.writeSync(.set(WriteEntry(path: path("items/k\(i)/score"), value: .int(Int64(i)))), check: nil) }
        var build = try #require(try step(a, nil, at: location))
        build = try #require(try step(a, build, at: location))
        try b.writeSync(.set(WriteEntry(path: location, value: .object(["z": .object(["score": .int(5)])]))), check: nil)
        while !build.slicesDone { build = try #require(try step(a, build, at: location)) }
        #expect(try step(a, build, at: location) == nil)
        let query = TreeQuery(orderBy: .child(path("score")), limit: .last(2))
        #expect(try answers(a, query, at: location).0 == nil, "given up, not built")
        // Asked again, it is built from the data as it is now.
        a.buildQueryIndex(at: location, spec: "score")
        #expect(try answers(a, query, at: location).0 == .object(["z": .object(["score": .int(5)])]))
    }

    @Test func oneNodeBuildsAnIndexAtATime() throws {
        let (a, b) = try slicedEngines()
        defer { a.close(); b.close() }
        let location = path("items")
        for i in 0..<5 { try a.writeSync(.set(WriteEntry(path: path("items/k\(i)/score"), value: .int(Int64(i)))), check: nil) }
        var build = try #require(try step(a, nil, at: location))
        #expect(try step(b, nil, at: location) == nil, "a holds the build's lock")
        while let next = try step(a, build, at: location) { build = next }
        let query = TreeQuery(orderBy: .child(path("score")), limit: .first(1))
        #expect(try answers(b, query, at: location).0 == .object(["k0": .object(["score": .int(0)])]))
        #expect(try step(b, nil, at: location) == nil, "built already")
        // The build's advisory lock went with its end.
        let held = try b.readSync { view in
            try (view as! PostgresTreeView).connection.query("SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND database = (SELECT oid FROM pg_database WHERE datname = current_database())").int64(0, 0)
        }
        #expect(held == 0)
    }
}

/// The build's own sizes at their defaults, crossed: a slice stops at
/// `PostgresEngine.maxIndexChildrenPerSlice` children, and a catch-up that must read more
/// than `PostgresEngine.indexCatchUpChangesPerRead` changes in each of its two passes reads
/// them all.
extension PostgresQueryIndexTests {
    func indexRows(_ engine: PostgresEngine) throws -> Int {
        Int(try engine.readSync { view in
            try (view as! PostgresTreeView).connection.query("SELECT count(*) FROM query_index WHERE location = 'items' AND spec = 'score'").int64(0, 0)
        })
    }

    @Test func theDefaultSliceAndCatchUpSizesAreCrossed() throws {
        let url = try PostgresCluster.shared().makeDatabase()
        let (a, b) = (try PostgresEngine(url: url), try PostgresEngine(url: url))
        defer { a.close(); b.close() }
        let slice = PostgresEngine.maxIndexChildrenPerSlice
        #expect(StoreOptions().queryIndexChildrenPerSlice > slice, "the engine's own bound is the one that applies")
        let location = path("items")
        let key = { (i: Int) in "k" + String(String(i + 10_000).dropFirst()) }
        var children: [String: JSONValue] = [:]
        for i in 0..<(slice * 2 + slice / 2) { children[key(i)] = .object(["score": .int(Int64(i))]) }
        try a.writeSync(.set(WriteEntry(path: location, value: .object(children))), check: nil)

        var build = try #require(try step(a, nil, at: location))
        build = try #require(try step(a, build, at: location))
        #expect(try indexRows(a) == slice, "one slice holds the bound's count of children")
        #expect(!build.slicesDone)
        // On the other node: twice a catch-up read's changes to the first child, then a few
        // that move other children of the first slice out of the query's first 25, which
        // only reads past both bounds can find.
        let perRead = PostgresEngine.indexCatchUpChangesPerRead
        for i in 0..<(perRead * 2) {
            try b.writeSync(.set(WriteEntry(path: path("items/\(key(0))/score"), value: .int(Int64(-i)))), check: nil)
        }
        for i in 1...20 {
            try b.writeSync(.set(WriteEntry(path: path("items/\(key(i))/score"), value: .int(Int64(100_000 + i)))), check: nil)
        }
        var slices = 1
        while !build.slicesDone {
            build = try #require(try step(a, build, at: location))
            slices += 1
        }
        #expect(slices == 3)
        // The catch-up reads and writes the touched children as sets, not a round trip or
        // more each: the changes' reads, then a few statements per pass.
        let (next, trips) = try a.writerQueue.sync { () throws -> (PostgresEngine.IndexBuild?, Int) in
            let connection = try a.writerConnection()
            let before = connection.exchanges
            return (try a.indexBuildStep(build, path: location, spec: "score"), connection.exchanges - before)
        }
        #expect(next == nil, "caught up and built")
        #expect(trips <= 40, "\(trips) round trips to catch up 21 children")
        let query = TreeQuery(orderBy: .child(path("score")), limit: .first(25))
        let (indexed, memory) = try answers(a, query, at: location)
        #expect(indexed != nil && indexed == memory)
        #expect(try indexRows(a) == children.count)
    }
}

/// A slice's children read as sets: children with no leaf at the index's path (an object
/// there, or nothing) are found in one statement, not a round trip each.
extension PostgresQueryIndexTests {
    @Test func aSliceOfChildrenWithoutALeafThereTakesAFewRoundTrips() throws {
        let url = try PostgresCluster.shared().makeDatabase()
        let engine = try PostgresEngine(url: url)
        defer { engine.close() }
        let location = path("items")
        var children: [String: JSONValue] = [:]
        for i in 0..<120 {
            switch i % 3 {
            case 0: children["k\(i)"] = .object(["score": .int(Int64(i))])
            case 1: children["k\(i)"] = .object(["score": .object(["deep": .int(1)])])
            default: children["k\(i)"] = .object(["other": .string("no score")])
            }
        }
        try engine.writeSync(.set(WriteEntry(path: location, value: .object(children))), check: nil)
        var build = try #require(try step(engine, nil, at: location))
        let trips = try engine.writerQueue.sync { () throws -> Int in
            let connection = try engine.writerConnection()
            let before = connection.exchanges
            build = try #require(try engine.indexBuildStep(build, path: location, spec: "score"))
            return connection.exchanges - before
        }
        #expect(build.slicesDone)
        #expect(trips <= 24, "\(trips) round trips for a slice of 120 children, 80 without a leaf at the index's path")
        while let next = try step(engine, build, at: location) { build = next }
        for limit in [TreeQuery.Limit.first(45), .last(45), .first(90)] {
            let (indexed, memory) = try answers(engine, TreeQuery(orderBy: .child(path("score")), limit: limit), at: location)
            #expect(indexed != nil && indexed == memory, "\(limit)")
        }
    }
}

/// While another node builds an index, this node's queries do not each ask for it: a
/// refused start is remembered for `PostgresEngine.indexRetryMilliseconds` on the engine's
/// clock, and asked again after.
extension PostgresQueryIndexTests {
    @Test func aRefusedBuildIsNotAskedForAgainAtOnce() throws {
        let url = try PostgresCluster.shared().makeDatabase()
        let now = Mutex<Int64>(WallClock.milliseconds())
        let a = try PostgresEngine(url: url)
        let b = try PostgresEngine(url: url, clock: { now.withLock { $0 } })
        defer { a.close(); b.close() }
        let location = path("items")
        for i in 0..<5 { try a.writeSync(.set(WriteEntry(path: path("items/k\(i)/score"), value: .int(Int64(i)))), check: nil) }
        var build = try #require(try step(a, nil, at: location), "a holds the build's lock")
        func writerExchanges() throws -> Int { try b.writerQueue.sync { try b.writerConnection().exchanges } }

        var before = try writerExchanges()
        b.buildQueryIndex(at: location, spec: "score")
        #expect(try writerExchanges() > before, "the first ask tries the lock")
        before = try writerExchanges()
        for _ in 0..<5 { b.buildQueryIndex(at: location, spec: "score") }
        #expect(try writerExchanges() == before, "refused just now: not asked again")

        now.withLock { $0 += PostgresEngine.indexRetryMilliseconds }
        b.buildQueryIndex(at: location, spec: "score")
        #expect(try writerExchanges() > before, "asked again once the interval is over")

        while let next = try step(a, build, at: location) { build = next }
        let query = TreeQuery(orderBy: .child(path("score")), limit: .first(2))
        #expect(try answers(b, query, at: location).0 == .object(["k0": .object(["score": .int(0)]), "k1": .object(["score": .int(1)])]))
    }
}
