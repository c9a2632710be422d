import HearthJSON
import HearthStore
import HearthTesting
import Testing
@testable import HearthPostgres

/// Key-order pages on PostgreSQL (bounds and either limit) from the location's rows: what
/// the whole read answers (`KeyOrderPageTests` on SQLite has the cases one by one; the walk
/// is shared, `TreeKeys.childKeysInKeyOrder`).
extension PostgresQueryIndexTests {
    @Test func keyOrderPagesAreWhatTheWholeReadAnswers() throws {
        let url = try PostgresCluster.shared().makeDatabase()
        let engine = try PostgresEngine(url: url)
        defer { engine.close() }
        let keys = ["-Na1", "-Nz9", "0", "12", "-3", "007", "3000000000", "2024-01-01", "2024", "a", "a-b", "a b", "a(",
                    "b", "é", "e\u{301}", "zz"]
        let bounds = ["", "a", "a-", "a-b", "b", "-N", "2024-01-01", "2", "zz", "é"]
        var g = SplitMix64(seed: 11)
        func next(_ bound: Int) -> Int { Int.random(in: 0..<bound, using: &g) }
        func bound() -> TreeQuery.Bound? {
            next(2) == 0 ? nil : TreeQuery.Bound(.string(bounds[next(bounds.count)]), inclusive: next(2) == 0)
        }
        var (asked, fromTheRows, firstFromTheRows) = (0, 0, 0)
        for round in 0..<50 {
            let child = DataPath(uncheckedSegments: ["list", keys[next(keys.count)]])
            let value: JSONValue? = [nil, .int(Int64(round)), ["t": 1]][next(3)]
            try engine.writeSync(.set(WriteEntry(path: next(4) == 0 ? DataPath(uncheckedSegments: child.segments + ["x"]) : child,
                                                 value: value)), check: nil)
            for _ in 0..<10 {
                let n = [1, 2, 4, 9][next(4)]
                let query = TreeQuery(orderBy: .key, start: bound(), end: bound(), limit: next(2) == 0 ? .first(n) : .last(n))
                let (answer, whole, rows) = try engine.readSync { view in
                    (try view.query(query, at: path("list")), query.apply(to: try view.value(at: path("list"))),
                     try (view as! PostgresTreeView).childrenInKeyOrder(query, at: path("list")))
                }
                #expect(answer == whole, "round \(round), \(query)")
                asked += 1
                if let rows {
                    #expect(rows == whole, "round \(round), \(query)")
                    fromTheRows += 1
                    if case .first? = query.limit { firstFromTheRows += 1 }
                }
            }
        }
        #expect(fromTheRows * 2 > asked && firstFromTheRows * 4 > asked,
                "answered from the rows \(fromTheRows) of \(asked) times, \(firstFromTheRows) with limitToFirst")
    }
}
