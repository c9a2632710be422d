import HearthJSON
import HearthSQLite
import HearthStore
import HearthTesting
import Testing

/// Query indexes: built on demand, kept in step by the writer, always answering exactly
/// what the in-memory query answers (docs/protocol/rest.md §1.3: `.indexOn` as real
/// indexes).
@Suite struct QueryIndexTests {
    let dir = TemporaryDirectory(prefix: "hearth-index")
    func path(_ text: String) -> DataPath { try! DataPath(string: text) }

    /// A deterministic generator, so a failure reproduces.
    struct Generator {
        var state: UInt64
        mutating func next(_ bound: Int) -> Int {
            state = state &* 6364136223846793005 &+ 1442695040888963407
            return Int((state >> 33) % UInt64(bound))
        }
    }

    func randomScore(_ g: inout Generator) -> JSONValue? {
        switch g.next(7) {
        case 0: return nil
        case 1: return .bool(g.next(2) == 0)
        case 2: return .double(Double(g.next(100)) / 4)
        case 3: return .string(["a", "b", "B", "zz", "é"][g.next(5)])
        case 4: return .object(["deep": .int(Int64(g.next(3)))])
        default: return .int(Int64(g.next(20)))
        }
    }

    func queries(_ g: inout Generator) -> [TreeQuery] {
        var result: [TreeQuery] = []
        for order in [TreeQuery.OrderBy.child(path("score")), .value] {
            for limit in [TreeQuery.Limit.first(3), .last(4), .first(50)] {
                var q = TreeQuery(orderBy: order, limit: limit)
                result.append(q)
                q.start = .init(.int(Int64(g.next(15))), inclusive: g.next(2) == 0)
                result.append(q)
                q.end = .init(.string("b"), inclusive: g.next(2) == 0)
                result.append(q)
                q.start = .init(.bool(true), inclusive: true)
                q.end = nil
                result.append(q)
                // Ties at the bound's value broken by key (the SDKs' startAt(value, key)).
                q.start = .init(.int(Int64(g.next(20))), inclusive: g.next(2) == 0, key: "k\(g.next(70))")
                result.append(q)
                q.end = .init(.int(Int64(g.next(20))), inclusive: g.next(2) == 0, key: ["k\(g.next(70))", "7", ""][g.next(3)])
                result.append(q)
                q.start = nil
                result.append(q)
            }
        }
        return result
    }

    @Test func indexedAnswersEqualInMemoryAnswersThroughRandomWrites() throws {
        let store = try SQLiteTreeStore(directory: dir.path)
        var g = Generator(state: 42)
        let location = path("items")
        for i in 0..<60 {
            if let score = randomScore(&g) { try store.writeSync(.set(WriteEntry(path: path("items/k\(i)/score"), value: score))) }
            try store.writeSync(.set(WriteEntry(path: path("items/k\(i)/name"), value: .string("n\(i)"))))
        }
        store.buildQueryIndex(at: location, spec: "score")
        for round in 0..<80 {
            let key = "k\(g.next(70))"
            switch g.next(6) {
            case 0: try store.writeSync(.set(WriteEntry(path: path("items/\(key)"), value: nil)))
            case 1: try store.writeSync(.set(WriteEntry(path: path("items/\(key)/score"), value: randomScore(&g))))
            case 2: try store.writeSync(.set(WriteEntry(path: path("items/\(key)"), value: .object(["score": randomScore(&g) ?? .int(1)]))))
            case 3: try store.writeSync(.update(base: location, entries: [
                WriteEntry(path: path("items/\(key)/score"), value: randomScore(&g)),
                WriteEntry(path: path("items/k\(g.next(70))x/score"), value: .int(3)),
            ]))
            case 4: try store.writeSync(.set(WriteEntry(path: path("items/\(key)/score/deep"), value: .int(1))))
            default: try store.writeSync(.set(WriteEntry(path: path("items/\(key)/other"), value: .int(1))))
            }
            // Rebuild .value too from time to time, and replace the whole location once.
            if round == 40 {
                try store.writeSync(.set(WriteEntry(path: location, value: .object(["z": .object(["score": .int(5)]), "y": .int(2)]))))
            }
            store.buildQueryIndex(at: location, spec: "score")
            store.buildQueryIndex(at: location, spec: ".value")
            for query in queries(&g) {
                let (indexed, memory) = try store.readSync { view in
                    (try view.query(query, at: location), query.apply(to: try view.value(at: location)))
                }
                #expect(indexed == memory, "round \(round), \(query)")
            }
        }
    }

    @Test func theIndexIsSearchedNotScanned() throws {
        let store = try SQLiteTreeStore(directory: dir.path)
        let plan = try store.queryIndexPlan()
        #expect(plan.contains { $0.contains("SEARCH query_index USING") && $0.contains("location=? AND spec=?") })
        #expect(!plan.contains { $0.hasPrefix("SCAN") || $0.contains("TEMP B-TREE") })
    }

    @Test func theFirstQueryAsksForTheIndexAndLaterOnesUseIt() throws {
        let store = try SQLiteTreeStore(directory: dir.path)
        let children = (0..<500).map { i in ("c\(i)", JSONValue.object(["at": .int(Int64(i))])) }
        try store.writeSync(.set(WriteEntry(path: path("log"), value: .object(Dictionary(uniqueKeysWithValues: children)))))
        let query = TreeQuery(orderBy: .child(path("at")), limit: .last(3))
        let first = try store.readSync { try $0.query(query, at: path("log")) }  // in memory; asks for the index
        store.buildQueryIndex(at: path("log"), spec: "at")  // waits for the writer (already queued)
        try store.writeSync(.set(WriteEntry(path: path("log/new/at"), value: .int(1_000))))
        let second = try store.readSync { try $0.query(query, at: path("log")) }
        #expect(first == .object(["c497": .object(["at": 497]), "c498": .object(["at": 498]), "c499": .object(["at": 499])]))
        #expect(second == .object(["c498": .object(["at": 498]), "c499": .object(["at": 499]), "new": .object(["at": 1_000])]))
    }
}
