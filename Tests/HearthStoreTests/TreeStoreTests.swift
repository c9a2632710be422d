import Dispatch
import HearthJSON
import Synchronization
import Testing
@testable import HearthSQLite
@testable import HearthStore

@Suite struct TreeStoreTests {
    let dir = TemporaryDirectory()

    func open(_ options: StoreOptions = StoreOptions(), onCommit: @escaping @Sendable ([Change]) -> Void = { _ in }) throws -> SQLiteTreeStore {
        try SQLiteTreeStore(directory: dir.path, options: options, onCommit: { changes, _ in onCommit(changes) })
    }

    @Test func leafTypesRoundTripExactly() throws {
        let store = try open()
        let value = obj([
            "s": .string("héllo \"q\""), "i": .int(Int64.max), "n": .int(-3),
            "d": .double(52.520008), "t": .bool(true), "f": .bool(false), "e": .string(""),
        ])
        try store.put("a/b", value)
        #expect(try store.get("a/b") == value)
        #expect(try store.get("a/b/i") == .int(Int64.max))
        #expect(try store.get("a") == obj(["b": value]))
        #expect(try store.get("missing") == .null)
    }

    @Test func setReplacesTheWholeSubtree() throws {
        let store = try open()
        try store.put("u", obj(["a": .int(1), "b": obj(["c": .int(2)])]))
        try store.put("u", obj(["z": .int(9)]))
        #expect(try store.get("u") == obj(["z": .int(9)]))
    }

    @Test func writingBelowALeafReplacesTheLeaf() throws {
        let store = try open()
        try store.put("a/b", .string("leaf"))
        try store.put("a/b/c/d", .int(1))
        #expect(try store.get("a") == obj(["b": obj(["c": obj(["d": .int(1)])])]))
    }

    @Test func deletingTheLastChildRemovesTheParent() throws {
        let store = try open()
        try store.put("a/b/c", .int(1))
        try store.put("a/b/c", nil)
        #expect(try store.get("a/b") == .null)
        #expect(try store.get("a") == .null)
        #expect(try store.readSync { try $0.exists(at: path("a")) } == false)
    }

    @Test func rootCanHoldALeafAndBeReplaced() throws {
        let store = try open()
        try store.put("", .string("hello"))
        #expect(try store.get("") == .string("hello"))
        #expect(try store.readSync { try $0.childKeys(at: path("")) } == [])
        try store.put("x", .int(1))
        #expect(try store.get("") == obj(["x": .int(1)]))
        try store.put("", nil)
        #expect(try store.get("") == .null)
    }

    @Test func siblingKeysThatSortAroundTheSlashStayApart() throws {
        // '!' sorts before '/', '0' right after it: the range scan must not mix them up.
        let store = try open()
        try store.put("k", obj(["x": .int(1)]))
        try store.put("k!", .int(2))
        try store.put("k0", obj(["y": .int(3)]))
        try store.put("k-", .int(4))
        #expect(try store.get("k") == obj(["x": .int(1)]))
        let keys = try store.readSync { try $0.childKeys(at: path("")) }
        #expect(Set(keys) == ["k", "k!", "k0", "k-"])
        #expect(keys.count == 4)
    }

    @Test func childKeysSkipsWholeSubtrees() throws {
        let store = try open()
        var children: [String: JSONValue] = [:]
        for i in 0..<50 { children["c\(i)"] = obj(["a": .int(Int64(i)), "b": obj(["deep": .bool(true)])]) }
        children["leaf"] = .string("x")
        try store.put("p", .object(children))
        let keys = try store.readSync { try $0.childKeys(at: path("p")) }
        #expect(Set(keys) == Set(children.keys))
        #expect(keys.count == 51)
        #expect(try store.readSync { try $0.childKeys(at: path("p/leaf")) } == [])
    }

    @Test func multiPathUpdateIsAppliedWholeOrNotAtAll() throws {
        let store = try open()
        try store.put("users/bob/name", .string("Bob"))
        struct Denied: Error {}
        let update = WriteOperation.update(base: path("users"), entries: [
            WriteEntry(path: path("users/bob/name"), value: nil),
            WriteEntry(path: path("users/alice/city"), value: .string("Oslo")),
        ])
        #expect(throws: WriteFailure.self) {
            try store.writeSync(update, check: { _, _ in throw Denied() })
        }
        #expect(try store.get("users") == obj(["bob": obj(["name": .string("Bob")])]))
        try store.writeSync(update)
        #expect(try store.get("users") == obj(["alice": obj(["city": .string("Oslo")])]))
    }

    @Test func checkSeesTheWritersCurrentView() throws {
        let store = try open()
        try store.put("counter", .int(41))
        let seen = Mutex<JSONValue?>(nil)
        try store.writeSync(.set(WriteEntry(path: path("other"), value: .int(1))), check: { view, _ in
            let value = try view.value(at: path("counter"))
            seen.withLock { $0 = value }
        })
        #expect(seen.withLock { $0 } == .int(41))
    }

    @Test func concurrentWritesAreGroupCommittedAndAllAcknowledged() async throws {
        let store = try open()
        let n = 200
        let outcomes = Mutex<[Int64]>([])
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            let group = DispatchGroup()
            for i in 0..<n {
                group.enter()
                store.write(.set(WriteEntry(path: path("items/i\(i)"), value: .int(Int64(i)))), check: nil) { result in
                    if case .success(let outcome) = result { outcomes.withLock { $0.append(outcome.seq) } }
                    group.leave()
                }
            }
            group.notify(queue: .global()) { done.resume() }
        }
        let seqs = outcomes.withLock { $0 }
        #expect(seqs.count == n)
        #expect(Set(seqs).count == n)
        #expect(try store.readSync { try $0.childKeys(at: path("items")) }.count == n)
    }

    @Test func oneFailingWriteInABatchLeavesTheOthers() async throws {
        let store = try open()
        struct Denied: Error {}
        let results = Mutex<[String: Bool]>([:])
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            let group = DispatchGroup()
            for i in 0..<20 {
                group.enter()
                let deny: WriteCheck = { _, _ in throw Denied() }
                store.write(.set(WriteEntry(path: path("b/k\(i)"), value: .int(Int64(i)))),
                            check: i % 3 == 0 ? deny : nil) { result in
                    results.withLock { $0["k\(i)"] = (try? result.get()) != nil }
                    group.leave()
                }
            }
            group.notify(queue: .global()) { done.resume() }
        }
        let stored = Set(try store.readSync { try $0.childKeys(at: path("b")) })
        let acknowledged = Set(results.withLock { $0 }.filter(\.value).keys)
        #expect(stored == acknowledged)
        #expect(stored.count == 13)
    }

    @Test func changesArePublishedAfterCommitAndLogged() throws {
        let published = Mutex<[Change]>([])
        let store = try open(onCommit: { changes in published.withLock { $0 += changes } })
        let first = try store.put("a", .int(1))
        let second = try store.writeSync(.update(base: path("x"), entries: [
            WriteEntry(path: path("x/y/z"), value: .int(2)), WriteEntry(path: path("x/w"), value: nil),
        ]))
        #expect(second.seq > first.seq)
        let seen = published.withLock { $0 }
        try #require(seen.map(\.seq) == [first.seq, second.seq])
        #expect(seen[0].kind == .put && seen[0].path == path("a") && seen[0].data == .int(1))
        #expect(seen[1].kind == .patch && seen[1].data == obj(["y/z": .int(2), "w": .null]))
        let logged = try store.changes(after: 0, limit: 10)
        #expect(logged.changes.map(\.seq) == [first.seq, second.seq])
    }

    @Test func changeLogIsTrimmedToItsRetention() throws {
        var options = StoreOptions()
        options.changeLogRetention = 10
        let store = try open(options)
        var last: Int64 = 0
        for i in 0..<40 { last = try store.put("n", .int(Int64(i))).seq }
        let (changes, oldest) = try store.changes(after: 0, limit: 100)
        #expect(changes.count <= 10 + 1)
        #expect(changes.count >= 10)
        #expect(changes.last?.seq == last)
        #expect(oldest == changes.first?.seq)
    }

    @Test func changeLogIsTrimmedByAgeInTheBackground() throws {
        let now = Mutex<Int64>(1_000_000)
        var options = StoreOptions()
        options.changeLogMaxAge = 60
        let store = try SQLiteTreeStore(directory: dir.path, options: options, clock: { now.withLock { $0 } })
        for i in 0..<5 { try store.put("old", .int(Int64(i))) }
        now.withLock { $0 += 61_000 }
        let fresh = try store.put("new", .int(1)).seq
        #expect(try store.changes(after: 0, limit: 100).changes.count == 6)  // not trimmed on this write
        #expect(store.trimChangeLog() == 5)
        let (changes, oldest) = try store.changes(after: 0, limit: 100)
        #expect(changes.map(\.seq) == [fresh] && oldest == fresh)
        // The high-water mark survives even an emptied log.
        now.withLock { $0 += 61_000 }
        #expect(store.trimChangeLog() == 1)
        #expect(try store.readSync { try $0.lastChangeSeq() } == fresh)
        #expect(try store.changes(after: 0, limit: 100).oldestSeq == nil)
    }

    @Test func aLargeTrimBacklogIsWorkedOffInChunks() throws {
        var options = StoreOptions()
        options.changeLogRetention = 1
        options.maxBatchSize = 512
        let store = try SQLiteTreeStore(directory: dir.path, options: options)
        // One batch far larger than one trim chunk: 2,500 writes committed together.
        let done = DispatchGroup()
        for i in 0..<2_500 {
            done.enter()
            store.write(.set(WriteEntry(path: path("k"), value: .int(Int64(i))))) { _ in done.leave() }
        }
        done.wait()
        store.trimChangeLog()
        #expect(try store.changes(after: 0, limit: 10_000).changes.count == 1)
    }

    @Test func theWriterReportsWatchedLocationsAWriteLeftUnchanged() throws {
        let published = Mutex<[Change]>([])
        let store = try SQLiteTreeStore(
            directory: dir.path,
            watch: { base in base.isRoot || base == (try! DataPath(string: "users")) ? [try! DataPath(string: "users/a"), try! DataPath(string: "users/b")] : [] },
            onCommit: { changes, _ in published.withLock { $0 += changes } })
        try store.put("users", obj(["a": obj(["n": .int(1)]), "b": obj(["n": .int(1)])]))
        // Same value for a, new value for b.
        try store.put("users", obj(["a": obj(["n": .int(1)]), "b": obj(["n": .int(2)])]))
        try store.writeSync(.update(base: path("users"), entries: [WriteEntry(path: path("users/b/n"), value: .int(3))]))
        let seen = published.withLock { $0 }
        #expect(seen.map(\.unchangedBelow) == [[], [path("users/a")], [path("users/a")]])
    }

    @Test func onCommitSeesTheBatchsStateAndSeq() throws {
        let seenValue = Mutex<[JSONValue]>([])
        let store = try SQLiteTreeStore(directory: dir.path, onCommit: { changes, view in
            seenValue.withLock { $0.append(try! view.value(at: DataPath(string: "a"))) }
            #expect(try! view.lastChangeSeq() == changes.last!.seq)
        })
        try store.put("a", .int(7))
        #expect(seenValue.withLock { $0 } == [.int(7)])
        let (logged, _) = try store.readSync { try $0.changes(after: 0, limit: 10) }
        #expect(logged.map(\.data) == [.int(7)])
    }

    @Test func dataSurvivesReopenAndTheFileIsSound() throws {
        do {
            let store = try open()
            try store.put("keep/me", .string("yes"))
            store.close()
            #expect(throws: WriteFailure.self) { try store.put("after", .int(1)) }
        }
        let reopened = try open()
        #expect(try reopened.get("keep/me") == .string("yes"))
        #expect(try reopened.integrityCheck() == "ok")
    }

    @Test func aNewerSchemaIsRefused() throws {
        do {
            let store = try open()
            store.close()
        }
        let raw = try SQLiteConnection(path: dir.path + "/" + SQLiteTreeStore.fileName, mode: .readWriteCreate)
        try raw.execute("PRAGMA user_version = 999")
        #expect(throws: StoreError.schemaTooNew(found: 999, known: Schema.currentVersion)) { try open() }
    }
}

/// `renderedValue(at:)` (JSON straight from the sorted rows) against the dictionary path.
@Suite struct RenderedValueTests {
    let dir = TemporaryDirectory()

    @Test func equalsTheRenderedAssembledValueAtEveryPath() throws {
        let store = try SQLiteTreeStore(directory: dir.path)
        defer { store.close() }
        var random = SplitMix64(seed: 0xFA_57)
        let keys = ["0", "1", "2", "10", "01", "-1", "a", "a-b", "a0", "ä", "😀", "\u{FFFF}", "q\"k", "x y"]
        var written: [String] = [""]
        for step in 0..<400 {
            let depth = 1 + Int(random.next() % 3)
            let target = (0..<depth).map { _ in keys[Int(random.next() % UInt64(keys.count))] }.joined(separator: "/")
            let value: JSONValue? = switch random.next() % 5 {
            case 0: nil
            case 1: .string("s\(step)\n")
            case 2: .double(Double(step) / 3)
            case 3: .bool(step % 2 == 0)
            default: obj(["0": .int(Int64(step)), "2": obj(["k": .string("v")]), "name": .string("n")])
            }
            try store.put(target, value)
            written.append(target)
        }
        for target in Set(written + written.map { String($0.split(separator: "/").first ?? "") }) {
            try store.readSync { view in
                let expected = JSONWriter.write(FirebaseTree.render(try view.value(at: path(target))))
                #expect(try view.renderedValue(at: path(target)) == expected, "at /\(target)")
            }
        }
    }
}
