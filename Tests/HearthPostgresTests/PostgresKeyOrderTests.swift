import HearthJSON
import HearthStore
import HearthTesting
import Testing
@testable import HearthPostgres

/// `limitToLast(n)` in key order on PostgreSQL, from the end of the location's rows: what
/// the whole read answers, and taken whenever it can be (`KeyOrderQueryTests` on SQLite
/// has the cases one by one; the walk is shared, `TreeKeys.childKeysInKeyOrder`).
extension PostgresQueryIndexTests {
    @Test func theLastChildrenInKeyOrderAreWhatTheWholeReadAnswers() throws {
        let url = try PostgresCluster.shared().makeDatabase()
        let engine = try PostgresEngine(url: url)
        defer { engine.close() }
        let keys = ["-Na1", "-Nz9", "0", "12", "-3", "007", "a", "a-b", "a b", "a(", "b", "é", "e\u{301}", "zz", "\u{E000}", "\u{1F600}"]
        var g = SplitMix64(seed: 9)
        func next(_ bound: Int) -> Int { Int.random(in: 0..<bound, using: &g) }
        var fromTheEnd = 0
        for round in 0..<60 {
            let key = keys[next(keys.count) % (round < 40 ? keys.count - 2 : keys.count)]
            let child = DataPath(uncheckedSegments: ["list", key])
            switch next(4) {
            case 0: try engine.writeSync(.set(WriteEntry(path: child, value: nil)), check: nil)
            case 1: try engine.writeSync(.set(WriteEntry(path: child, value: .int(Int64(next(9))))), check: nil)
            case 2: try engine.writeSync(.set(WriteEntry(path: DataPath(uncheckedSegments: child.segments + ["x"]), value: 1)), check: nil)
            default: try engine.writeSync(.set(WriteEntry(path: child, value: ["t": .int(Int64(next(9)))])), check: nil)
            }
            for n in [1, 2, 4, 9] {
                for order in [TreeQuery.OrderBy.key, .priority] {
                    let query = TreeQuery(orderBy: order, limit: .last(n))
                    let (answer, whole, end) = try engine.readSync { view in
                        (try view.query(query, at: path("list")), query.apply(to: try view.value(at: path("list"))),
                         try (view as! PostgresTreeView).childrenInKeyOrder(query, at: path("list")))
                    }
                    #expect(answer == whole, "round \(round), n \(n), \(order)")
                    if let end {
                        #expect(end == whole)
                        fromTheEnd += 1
                    }
                }
            }
        }
        #expect(fromTheEnd > 200, "answered from the end \(fromTheEnd) times")
        // A key from U+E000 on sends it back to the whole read.
        try engine.writeSync(.set(WriteEntry(path: DataPath(uncheckedSegments: ["list", "\u{E000}"]), value: 1)), check: nil)
        let last = TreeQuery(orderBy: .key, limit: .last(1))
        #expect(try engine.readSync { try ($0 as! PostgresTreeView).childrenInKeyOrder(last, at: path("list")) } == nil)
    }
}
