import Dispatch
import HearthJSON
import HearthStore
import HearthTesting
import Synchronization
import Testing
@testable import HearthPostgres

/// A batch's writes sent together (`PostgresTreeWriter`, `hearth_apply_batch`): the same
/// outcomes, tree and feed as one write per transaction, in order; the statement limits;
/// a database of the previous schema keeps working.
@Suite(.enabled(if: PostgresTests.enabled)) struct PostgresBatchWriteTests {
    static func path(_ text: String) -> DataPath { try! DataPath(string: text) }

    /// Writes that overlap: sets and updates of the same paths, deletes, a write then a
    /// delete of the same path, a write below a leaf, priorities, one write too large
    /// (`maxNodesPerWrite` 50) in the middle; more than `maxWritesPerStatement` in all.
    static var operations: [WriteOperation] {
        var ops: [WriteOperation] = []
        var big: [JSONKey: JSONValue] = [:]
        for i in 0..<40 { big[JSONKey("k\(i)")] = .int(Int64(i)) }
        ops.append(.set(WriteEntry(path: path("/big"), value: .object(big))))
        var more: [WriteEntry] = []
        for i in 40..<60 { more.append(WriteEntry(path: path("/big/k\(i)"), value: .int(Int64(i)))) }
        ops.append(.update(base: path("/big"), entries: more))
        for i in 0..<300 {
            switch i % 6 {
            case 0: ops.append(.set(WriteEntry(path: path("/a/\(i % 7)"), value: .int(Int64(i)))))
            case 1: ops.append(.update(base: path("/a"), entries: [WriteEntry(path: path("/a/b/\(i % 5)"), value: .string("s\(i)")),
                                                                    WriteEntry(path: path("/a/\((i + 1) % 7)"), value: nil)]))
            case 2: ops.append(.set(WriteEntry(path: path("/d"), value: ["x": .int(Int64(i)), "y": [".value": true, ".priority": .int(Int64(i))]])))
            case 3: ops.append(.set(WriteEntry(path: path("/d"), value: nil)))
            case 4: ops.append(.set(WriteEntry(path: path("/a/b/\(i % 5)/deeper"), value: .double(Double(i) + 0.5))))
            default: ops.append(.set(WriteEntry(path: path("/a"), value: nil)))
            }
            if i == 150 { ops.append(.set(WriteEntry(path: path("/big"), value: 1))) }  // replaces 60 rows: too large
        }
        return ops
    }

    static var options: StoreOptions {
        var options = StoreOptions()
        options.maxNodesPerWrite = 50
        return options
    }

    /// A write's outcome without its time: its number, or how it failed.
    static func summary(_ result: Result<WriteOutcome, WriteFailure>) -> String {
        switch result {
        case .success(let outcome): return "seq \(outcome.seq)"
        case .failure(.tooLarge): return "too large"
        case .failure(let failure): return "failed: \(failure)"
        }
    }

    /// Writes on unrelated paths (`PostgresTreeWriter.Disjoint`): applied set-based, after
    /// `prepared` (which the writes delete, replace and write below), with a too-large one
    /// among them when `tooLarge` (then one by one).
    static func disjointOperations(tooLarge: Bool) -> (prepared: [WriteOperation], batch: [WriteOperation]) {
        var prepared: [WriteOperation] = []
        var batch: [WriteOperation] = []
        var big: [JSONKey: JSONValue] = [:]
        for i in 0..<40 { big[JSONKey("k\(i)")] = .int(Int64(i)) }
        prepared.append(.set(WriteEntry(path: path("/big"), value: .object(big))))
        prepared.append(.update(base: path("/big"), entries: (40..<60).map { WriteEntry(path: path("/big/k\($0)"), value: .int(Int64($0))) }))
        for i in 0..<100 {
            prepared.append(.set(WriteEntry(path: path("/p\(i)"), value: i % 2 == 0 ? .int(Int64(i)) : ["x": 1, "y": [".value": "s", ".priority": 2]])))
            switch i % 5 {
            case 0: batch.append(.set(WriteEntry(path: path("/p\(i)/below"), value: .string("under a leaf"))))
            case 1: batch.append(.set(WriteEntry(path: path("/p\(i)"), value: nil)))
            case 2: batch.append(.update(base: path("/p\(i)"), entries: [WriteEntry(path: path("/p\(i)/x"), value: .double(0.5)),
                                                                        WriteEntry(path: path("/p\(i)/z"), value: [".value": true, ".priority": "p"])]))
            case 3: batch.append(.set(WriteEntry(path: path("/p\(i)"), value: ["a": ["b": .int(Int64(i))]])))
            default: batch.append(.set(WriteEntry(path: path("/q\(i)/new"), value: .int(Int64(i)))))
            }
            if tooLarge && i == 50 { batch.append(.set(WriteEntry(path: path("/big"), value: 1))) }
        }
        return (prepared, batch)
    }

    @Test func aBatchOfOverlappingWritesCommitsInOrderAsOneWriteAtATimeWould() throws {
        #expect(Self.operations.count > PostgresTreeWriter.maxWritesPerStatement * 2)
        try Self.checkOneBatch(prepared: [], Self.operations, tooLarge: 1)
    }

    @Test(arguments: [false, true]) func aBatchOfUnrelatedWritesIsAppliedAtOnceAsOneWriteAtATimeWould(tooLarge: Bool) throws {
        let (prepared, batch) = Self.disjointOperations(tooLarge: tooLarge)
        var disjoint = PostgresTreeWriter.Disjoint()
        for (index, operation) in batch.enumerated() { disjoint.add(operation.entries.map(\.path), write: index) }
        #expect(disjoint.holds)
        try Self.checkOneBatch(prepared: prepared, batch, tooLarge: tooLarge ? 1 : 0)
    }

    @Test func writesOnRelatedPathsAreNotDisjoint() {
        func holds(_ writes: [[String]]) -> Bool {
            var disjoint = PostgresTreeWriter.Disjoint()
            for (index, paths) in writes.enumerated() { disjoint.add(paths.map { Self.path($0) }, write: index) }
            return disjoint.holds
        }
        #expect(holds([["/a/b"], ["/a/c"], ["/b"], ["/a/d", "/a/d/e"]]))
        #expect(!holds([["/a/b"], ["/a/b"]]), "the same path")
        #expect(!holds([["/a/b"], ["/a"]]), "above another write's")
        #expect(!holds([["/a"], ["/a/b/c"]]), "below another write's")
        #expect(!holds([["/x"], ["/"]]), "the root")
        #expect(!holds([["/a/b"], ["/a/c"], ["/a"]]), "above two writes'")
    }

    /// `operations` queued while the writer is held inside a first batch, so they commit as
    /// one batch, against the same operations one per transaction on another database:
    /// the same outcomes (numbers one further on), tree and change log; both nodes hear
    /// every change in order.
    static func checkOneBatch(prepared: [WriteOperation], _ operations: [WriteOperation], tooLarge: Int) throws {
        // One write per transaction, on a database of its own: what the batch must match.
        let alone = try PostgresEngine(url: try PostgresCluster.shared().makeDatabase(), options: Self.options)
        defer { alone.close() }
        for operation in prepared { try alone.writeSync(operation, check: nil) }
        let expected = operations.map { operation in Self.summary(Result { () throws(WriteFailure) in try alone.writeSync(operation, check: nil) }) }
        #expect(expected.filter { $0 == "too large" }.count == tooLarge)

        // The same writes queued while the writer is held inside a first batch: they commit as one batch.
        let url = try PostgresCluster.shared().makeDatabase()
        let batches = Mutex<[Int]>([])
        let heard = PostgresEngineTests.Heard()
        var hooks = heard.hooks
        hooks.observeCommit = { writes, _ in batches.withLock { $0.append(writes) } }
        let (held, release) = (DispatchSemaphore(value: 0), DispatchSemaphore(value: 0))
        let armed = Atomic<Bool>(false)  // the batch after `prepared` is held
        let engine = try PostgresEngine(url: url, options: Self.options, clock: WallClock.milliseconds, hooks: hooks, beforeCommit: {
            if armed.exchange(false, ordering: .relaxed) { held.signal(); release.wait() }
        })
        defer { engine.close() }
        let otherNode = PostgresEngineTests.Heard()
        let other = try PostgresEngine(url: url, hooks: otherNode.hooks)
        defer { other.close() }
        for operation in prepared { try engine.writeSync(operation, check: nil) }
        let before = prepared.count
        armed.store(true, ordering: .relaxed)
        engine.write(.set(WriteEntry(path: Self.path("/first"), value: 0)), check: nil, effects: nil) { _ in }
        held.wait()
        let results = Mutex<[Int: Result<WriteOutcome, WriteFailure>]>([:])
        let done = DispatchGroup()
        for (index, operation) in operations.enumerated() {
            done.enter()
            engine.write(operation, check: nil, effects: nil) { result in
                results.withLock { $0[index] = result }
                done.leave()
            }
        }
        release.signal()
        done.wait()
        #expect(batches.withLock { $0 }.suffix(2) == [1, operations.count], "the writes committed as one batch")
        // Numbers: as alone's, one further on (the holding write's).
        let got = results.withLock { all in (0..<operations.count).map { Self.summary(all[$0]!) } }
        let shifted = expected.map { $0.hasPrefix("seq ") ? "seq \(Int($0.dropFirst(4))! + 1)" : $0 }
        #expect(got == shifted)
        try engine.writeSync(.set(WriteEntry(path: Self.path("/first"), value: nil)), check: nil)
        try alone.writeSync(.set(WriteEntry(path: Self.path("/first"), value: nil)), check: nil)
        #expect(try engine.readSync { try $0.exportValue(at: .root) } == alone.readSync { try $0.exportValue(at: .root) })
        // The feed: every change, in order, the same on both nodes and as alone's log.
        let count = before + expected.filter { $0.hasPrefix("seq ") }.count + 2
        #expect(heard.wait(for: count) && otherNode.wait(for: count))
        #expect(heard.all.map(\.seq) == Array(1...Int64(count)))
        #expect(otherNode.all.suffix(count - before) == heard.all.suffix(count - before).map { var change = $0; change.unchangedBelow = []; return change })
        var log = try engine.changes(after: 0, limit: 1_000).changes.dropLast()
        log.remove(at: before)  // the holding write
        let aloneLog = Array(try alone.changes(after: 0, limit: 1_000).changes.dropLast())
        #expect(log.count == aloneLog.count)
        #expect(log.map { [$0.path.storageKey, $0.kind.rawValue] } == aloneLog.map { [$0.path.storageKey, $0.kind.rawValue] })
        #expect(log.map(\.data) == aloneLog.map(\.data))
    }

    /// Writes sent with the COMMIT whose answer was lost (`resolveInFlight`): when the
    /// batch's mark logged one number per write, each took the next; with fewer numbers
    /// (one was too large) or none recorded, which were applied is unknown, and none gets one.
    @Test func writesWhoseAnswerWasLostTakeNumbersOnlyWhenTheMarkAccountsForEach() throws {
        let connection = try PGConnection(url: try PostgresCluster.shared().makeDatabase())
        func taken(_ count: Int) throws -> PostgresTreeWriter {
            let writer = PostgresTreeWriter(connection: connection, maxReplaced: 1_000, at: 1, lastSeq: 10)
            for i in 0..<count {
                let operation = WriteOperation.set(WriteEntry(path: Self.path("/w/\(i)"), value: .int(Int64(i))))
                try writer.add(operation, as: Change.record(of: operation, seq: 0, at: 1), ticket: i)
            }
            #expect(writer.takeQueued() != nil)
            #expect(writer.takeQueued() == nil, "taken once")
            return writer
        }
        let all = try taken(3)
        #expect(all.resolveInFlight(batchLast: 13) == [])
        #expect(all.outcomes.map(\.ticket) == [0, 1, 2] && all.outcomes.map(\.seq) == [11, 12, 13] && all.lastSeq == 13)
        #expect(all.resolveInFlight(batchLast: 13) == [], "resolved once")
        let short = try taken(3)
        #expect(short.resolveInFlight(batchLast: 12) == [0, 1, 2])
        #expect(short.outcomes.isEmpty && short.lastSeq == 10)
        let unrecorded = try taken(2)
        #expect(unrecorded.resolveInFlight(batchLast: nil) == [0, 1])
        #expect(unrecorded.outcomes.isEmpty)
    }

    /// The COMMIT ran but its answer, and that of the writes sent with it, were lost: the
    /// batch's mark says it committed and its last number, so each write is acknowledged
    /// with its number as if the answers had come. In a batch with a write too large (fewer
    /// numbers than writes) the writes cannot be told apart: "outcome unknown", never
    /// "not written" (which a client may retry). Both for batches sent whole (their base
    /// comes from the mark too, as the lock's answer was lost with the rest) and for batches
    /// judged inside their transaction (`reading`: their checks read the tree).
    @Test(arguments: [false, true])
    func writesWhoseCommitAnswerWasLostAfterItRanAreAnsweredFromTheMark(reading: Bool) throws {
        let check = reading ? WriteChecks.readsTheTree : nil
        let url = try PostgresCluster.shared().makeDatabase()
        let (held, release) = (DispatchSemaphore(value: 0), DispatchSemaphore(value: 0))
        let holdNext = Atomic<Bool>(false), passNext = Atomic<Bool>(false), dropNext = Atomic<Bool>(false)
        let engine = try PostgresEngine(url: url, options: Self.options, clock: WallClock.milliseconds, hooks: EngineHooks(), beforeCommit: {
            if holdNext.exchange(false, ordering: .relaxed) { held.signal(); release.wait() }
        }, answerOfCommitLost: {
            passNext.exchange(false, ordering: .relaxed) ? false : dropNext.exchange(false, ordering: .relaxed)
        })
        defer { engine.close() }
        try engine.writeSync(.set(WriteEntry(path: Self.path("/before"), value: 1)), check: check)
        dropNext.store(true, ordering: .relaxed)
        #expect(try engine.writeSync(.set(WriteEntry(path: Self.path("/lost"), value: 2)), check: check).seq == 2)
        let dropped = !dropNext.load(ordering: .relaxed), resolved = engine.lostCommitsResolved.load(ordering: .relaxed)
        #expect(dropped, "the answer was dropped")
        #expect(resolved == 1)

        // Two writes in one batch (queued while the writer is held in the batch before),
        // the first replacing 60 rows (`maxNodesPerWrite` 50): one number for two writes.
        var big: [JSONKey: JSONValue] = [:]
        for i in 0..<40 { big[JSONKey("k\(i)")] = .int(Int64(i)) }
        try engine.writeSync(.set(WriteEntry(path: Self.path("/big"), value: .object(big))), check: check)
        let more = (40..<60).map { WriteEntry(path: Self.path("/big/k\($0)"), value: .int(Int64($0))) }
        #expect(try engine.writeSync(.update(base: Self.path("/big"), entries: more), check: check).seq == 4)
        holdNext.store(true, ordering: .relaxed)
        engine.write(.set(WriteEntry(path: Self.path("/first"), value: 0)), check: check, effects: nil) { _ in }
        held.wait()
        let results = Mutex<[Int: Result<WriteOutcome, WriteFailure>]>([:])
        let done = DispatchGroup()
        for (index, operation) in [WriteOperation.set(WriteEntry(path: Self.path("/big"), value: 1)),
                                   .set(WriteEntry(path: Self.path("/small"), value: 3))].enumerated() {
            done.enter()
            engine.write(operation, check: check, effects: nil) { result in
                results.withLock { $0[index] = result }
                done.leave()
            }
        }
        passNext.store(true, ordering: .relaxed)
        dropNext.store(true, ordering: .relaxed)
        release.signal()
        done.wait()
        let droppedAgain = !dropNext.load(ordering: .relaxed), resolvedAgain = engine.lostCommitsResolved.load(ordering: .relaxed)
        #expect(droppedAgain, "the second batch's answer was dropped")
        #expect(resolvedAgain == 2)
        if reading {
            // The small write's check read the tree, which sent the large write first: its
            // answer came (too large), and only the small one went with the COMMIT, so the
            // mark accounts for it.
            guard case .failure(.tooLarge)? = results.withLock({ $0[0] }) else {
                Issue.record("the large write is not too large: \(String(describing: results.withLock { $0[0] }))"); return
            }
            #expect(try results.withLock { $0[1] }?.get().seq == 6)
        } else {
            for index in 0..<2 {
                guard case .failure(.outcomeUnknown(let store))? = results.withLock({ $0[index] }) else {
                    Issue.record("write \(index) is not outcome unknown: \(String(describing: results.withLock { $0[index] }))"); continue
                }
                #expect(store.description.contains("the batch committed, but whether this write was applied is unknown"))
            }
        }
        // It did commit: the small write applied, the large one not; numbers go on.
        #expect(try engine.readSync { try $0.value(at: Self.path("/small")) } == 3)
        #expect(try engine.readSync { try $0.value(at: Self.path("/big/k0")) } == 0)
        #expect(try engine.writeSync(.set(WriteEntry(path: Self.path("/after"), value: 4)), check: check).seq == 7)
    }

    /// A writer whose base is not known yet (a batch sent whole) sends nothing before the
    /// batch's one exchange: it leaves no statement to run first, a write that would not fit
    /// its one statement is left out and marks it full (the batch then goes the ordinary
    /// way), and its statement numbers the writes from the last number the lock found,
    /// which `learnBase` gives it before their answer.
    @Test func aWriterWithoutItsBaseSendsNothingAndHoldsOneStatementAtMost() throws {
        let url = try PostgresCluster.shared().makeDatabase()
        let connection = try PGConnection(url: url)
        try PostgresSchema.migrate(connection)
        try connection.execute("UPDATE hearth_meta SET value = 4 WHERE key = 'last_seq'")
        let writer = PostgresTreeWriter(connection: connection, maxReplaced: 1_000_000, at: 1, lastSeq: nil)
        for i in 0..<2 {
            let operation = WriteOperation.set(WriteEntry(path: Self.path("/w/\(i)"), value: .int(Int64(i))))
            try writer.add(operation, as: Change.record(of: operation, seq: 0, at: 1), ticket: i)
        }
        #expect(connection.beforeNextStatement == nil && !writer.full)
        var leaves: [JSONKey: JSONValue] = [:]
        for i in 0..<PostgresTreeWriter.maxRowsPerStatement { leaves[JSONKey("k\(i)")] = .int(Int64(i)) }
        let large = WriteOperation.set(WriteEntry(path: Self.path("/large"), value: .object(leaves)))
        try writer.add(large, as: Change.record(of: large, seq: 0, at: 1), ticket: 2)
        #expect(writer.full && writer.statements == 0)
        #expect(try connection.query("SELECT count(*) FROM changes").int64(0, 0) == 0, "nothing was sent")
        let statement = try #require(writer.takeQueued())
        try connection.execute("BEGIN")
        let answers = connection.runPipelined([.init(sql: PostgresEngine.orderingLockSQL), statement, .init(sql: "COMMIT")])
        #expect(answers.failure.map { "\($0)" } == nil && answers.results.count == 3)
        #expect(throws: StoreError.self, "no answer before the base") { try writer.received(answers.results[1]) }
        writer.learnBase(answers.results[0].int64(0, 0))
        try writer.received(answers.results[1])
        #expect(writer.outcomes.map(\.ticket) == [0, 1] && writer.outcomes.map(\.seq) == [5, 6] && writer.lastSeq == 6)
        let seqs = try connection.query("SELECT seq FROM changes ORDER BY seq")
        #expect((0..<seqs.rowCount).map { seqs.int64($0, 0) } == [5, 6])
    }

    /// What a batch sent whole cannot judge before its transaction goes the ordinary way,
    /// judged again on the tree: an increment (it reads the number it adds to), a fenced
    /// write (it reads the lease). A timestamp reads nothing, so it is sent whole.
    @Test func writesThatMustReadAreJudgedInsideTheirTransaction() throws {
        let engine = try PostgresEngine(url: try PostgresCluster.shared().makeDatabase())
        defer { engine.close() }
        for _ in 0..<2 { try engine.writeSync(.set(WriteEntry(path: Self.path("/n"), value: 3)), check: nil) }
        var before = engine.writerExchangesForTesting()
        let time: JSONValue = [".sv": "timestamp"]
        try engine.writeSync(.set(WriteEntry(path: Self.path("/t"), value: time)), check: nil)
        #expect(engine.writerExchangesForTesting() - before == 1)
        let increment: JSONValue = [".sv": ["increment": 2]]
        for _ in 0..<2 { try engine.writeSync(.set(WriteEntry(path: Self.path("/n"), value: increment)), check: nil) }
        before = engine.writerExchangesForTesting()
        try engine.writeSync(.set(WriteEntry(path: Self.path("/n"), value: increment)), check: nil)
        #expect(engine.writerExchangesForTesting() - before == 3)
        #expect(try engine.readSync { try $0.value(at: Self.path("/n")) } == 9)
        let fence = WriteFence(epoch: nil, session: nil, position: 0)
        try engine.writeSync(.set(WriteEntry(path: Self.path("/f"), value: 1)), check: { view, _ in
            guard try view.holds(fence) else { throw StoreError.closed }
        })
        #expect(try engine.readSync { try $0.value(at: Self.path("/f")) } == 1)
        #expect(try engine.changes(after: 0, limit: 10).changes.map(\.seq) == [1, 2, 3, 4, 5, 6, 7])
    }

    /// A batch of unrelated writes finds the rows it replaces in the primary key, whatever the
    /// table's size: no statement of the call reads `nodes` or `priorities` whole. With the
    /// statistics of a table of 6,400 rows, the subtree deletes joined to the entries did (a
    /// ninth of the table estimated per entry), and so did the delete of the entries and
    /// their ancestors (a filter on two arrays). The writes replace a leaf, an object with a
    /// priority and nothing, and the tree after them is exact.
    @Test(arguments: [500, 2_000, 6_400, 26_400, 120_000])
    func aBatchOfUnrelatedWritesScansNoTableWhole(rows: Int) throws {
        let connection = try PGConnection(url: try PostgresCluster.shared().makeDatabase())
        try PostgresSchema.migrate(connection)
        // Filling and analysing the largest table takes seconds on a loaded machine: more
        // than one answer's usual wait, which is not what this test is about.
        try connection.allowingLongExchanges { () throws(StoreError) in try connection.execute("""
            INSERT INTO nodes(path, kind, ival) SELECT 'big/' || g || '/x', \(LeafKind.int.rawValue), g FROM generate_series(1, \(rows)) g;
            INSERT INTO priorities(path, kind, ival) SELECT 'big/' || g, \(LeafKind.int.rawValue), g FROM generate_series(1, \(rows)) g;
            INSERT INTO nodes(path, kind, ival) VALUES ('w/0/7', \(LeafKind.int.rawValue), 1), ('w/1/7/a', \(LeafKind.int.rawValue), 2),
                                                       ('w/1/7/b', \(LeafKind.int.rawValue), 3);
            INSERT INTO priorities(path, kind, ival) VALUES ('w/1/7', \(LeafKind.int.rawValue), 9);
            ANALYZE nodes; ANALYZE priorities
            """) }
        // A table's count is of its whole-table scans, an index's of its scans, by this
        // session and not yet reported (never inside a transaction): the difference across
        // the batch is the batch's.
        func scans() throws -> [Int64] {
            let counts = try connection.query("""
                SELECT pg_stat_get_xact_numscans('nodes'::regclass), pg_stat_get_xact_numscans('priorities'::regclass),
                       pg_stat_get_xact_numscans('nodes_pkey'::regclass)
                """)
            return (0..<3).map { counts.int64(0, $0) }
        }
        try connection.execute("BEGIN")
        let before = try scans()
        let writer = PostgresTreeWriter(connection: connection, maxReplaced: 1_000, at: 1, lastSeq: 0)
        for i in 0..<10 {
            let operation = WriteOperation.set(WriteEntry(path: Self.path("/w/\(i)/7"), value: .int(Int64(100 + i))))
            try writer.add(operation, as: Change.record(of: operation, seq: 0, at: 1), ticket: i)
        }
        // Any other statement sends the queue first, in this transaction.
        let during = zip(try scans(), before).map { $0 - $1 }
        #expect(writer.outcomes.map(\.seq) == (1...10).map { $0 })
        #expect(during[0] == 0 && during[1] == 0, "whole-table scans of nodes, priorities: \(during[0]), \(during[1])")
        #expect(during[2] > 0, "the writes looked nodes up in its index")
        let written = try connection.query("SELECT path, ival FROM nodes WHERE path >= 'w/' AND path < 'w0' ORDER BY path")
        #expect((0..<written.rowCount).map { "\(written.text($0, 0))=\(written.int64($0, 1))" } == (0..<10).map { "w/\($0)/7=\(100 + $0)" })
        #expect(try connection.query("SELECT count(*) FROM priorities WHERE path >= 'w/' AND path < 'w0'").int64(0, 0) == 0)
        #expect(try connection.query("SELECT count(*) FROM nodes").int64(0, 0) == Int64(rows + 10))
        try connection.execute("ROLLBACK")
    }

    @Test func aQueueLongerThanAStatementsLimitsIsSentInSeveral() throws {
        let url = try PostgresCluster.shared().makeDatabase()
        let connection = try PGConnection(url: url)
        try PostgresSchema.migrate(connection)
        try connection.execute("BEGIN")
        let writer = PostgresTreeWriter(connection: connection, maxReplaced: 1_000_000, at: 1, lastSeq: 0)
        let writes = PostgresTreeWriter.maxWritesPerStatement * 2 + 1
        for i in 0..<writes {
            let operation = WriteOperation.set(WriteEntry(path: Self.path("/w/\(i % 10)"), value: .int(Int64(i))))
            try writer.add(operation, as: Change.record(of: operation, seq: 0, at: 1), ticket: i)
        }
        #expect(writer.statements == 2, "a full queue is sent before the next write joins it")
        // Any other statement sends the queue first, so it sees every write.
        #expect(try connection.query("SELECT count(*) FROM changes").int64(0, 0) == Int64(writes))
        #expect(writer.statements == 3)
        #expect(writer.outcomes.map(\.ticket) == Array(0..<writes))
        #expect(writer.outcomes.map(\.seq) == (1...Int64(writes)).map { $0 })
        #expect(try connection.query("SELECT ival FROM nodes WHERE path = 'w/0'").int64(0, 0) == Int64((writes - 1) / 10 * 10))

        // Rows: two writes of just over half the limit each go in two statements.
        let half = PostgresTreeWriter.maxRowsPerStatement / 2 + 1
        for ticket in 0..<2 {
            var value: [JSONKey: JSONValue] = [:]
            for i in 0..<half { value[JSONKey("k\(i)")] = .int(Int64(i)) }
            let operation = WriteOperation.set(WriteEntry(path: Self.path("/rows/\(ticket)"), value: .object(value)))
            try writer.add(operation, as: Change.record(of: operation, seq: 0, at: 1), ticket: writes + ticket)
        }
        try writer.flush()
        #expect(writer.statements == 5)
        #expect(try connection.query("SELECT count(*) FROM nodes WHERE path >= 'rows/' AND path < 'rows0'").int64(0, 0) == Int64(2 * half))
        #expect(writer.lastSeq == Int64(writes + 2))
        try connection.execute("ROLLBACK")
    }

    /// A database a node of the previous release made and wrote (schema 8, `hearth_apply`):
    /// a new node migrates it, reads its data, and numbers on; a node of the previous
    /// release still running can still write.
    @Test func aSchema8DatabaseKeepsItsDataAndNumbersAndTheOldFunction() throws {
        let url = try PostgresCluster.shared().makeDatabase()
        let connection = try PGConnection(url: url)
        try connection.execute("BEGIN")
        for migration in PostgresSchema.migrations.prefix(8) { try connection.execute(migration) }
        _ = try connection.query("INSERT INTO hearth_meta(key, value) VALUES ('schema_version', 8)")
        let oldApply = """
            SELECT hearth_apply($1::text[], '{}'::text[], 1000, $2::text[], '{2}'::smallint[], $3::bigint[], '{NULL}'::float8[], '{NULL}'::text[],
                                '{}'::text[], '{}'::smallint[], '{}'::bigint[], '{}'::float8[], '{}'::text[], $4, $5, 'put', $6, 1)
            """
        _ = try connection.query(oldApply, [.text("{\"a\"}"), .text("{\"a\"}"), .text("{5}"), .int(1), .text("a"), .text("5")])
        _ = try connection.query("UPDATE hearth_meta SET value = 1 WHERE key = 'last_seq'")
        try connection.execute("COMMIT")

        let engine = try PostgresEngine(url: url)
        defer { engine.close() }
        #expect(try connection.query("SELECT value FROM hearth_meta WHERE key = 'schema_version'").int64(0, 0) == Int64(PostgresSchema.currentVersion))
        #expect(try engine.readSync { try $0.value(at: .root) } == ["a": 5])
        #expect(try engine.writeSync(.set(WriteEntry(path: Self.path("/b"), value: 2)), check: nil).seq == 2)
        // The previous release's writer, beside the new one.
        try connection.execute("BEGIN")
        _ = try connection.query("UPDATE hearth_meta SET value = 3 WHERE key = 'last_seq'")
        _ = try connection.query(oldApply, [.text("{\"c\"}"), .text("{\"c\"}"), .text("{7}"), .int(3), .text("c"), .text("7")])
        try connection.execute("COMMIT")
        #expect(try engine.writeSync(.set(WriteEntry(path: Self.path("/d"), value: 4)), check: nil).seq == 4)
        #expect(try engine.readSync { try $0.value(at: .root) } == ["a": 5, "b": 2, "c": 7, "d": 4])
        #expect(try engine.changes(after: 0, limit: 10).changes.map(\.seq) == [1, 2, 3, 4])
    }
}
