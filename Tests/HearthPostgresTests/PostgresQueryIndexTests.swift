import HearthJSON
import HearthStore
import HearthTesting
import Testing
@testable import HearthPostgres

/// Query indexes on PostgreSQL: built by one node, kept in step by every node's writer,
/// always answering what the in-memory query answers.
@Suite(.enabled(if: PostgresTests.enabled)) struct PostgresQueryIndexTests {
    func path(_ text: String) -> DataPath { try! DataPath(string: text) }

    /// Scores of every type the order ranks (null, false/true, numbers, strings, objects).
    static func score(_ n: Int) -> JSONValue? {
        switch n % 7 {
        case 0: return nil
        case 1: return .bool(n % 2 == 0)
        case 2: return .double(Double(n % 40) / 4)
        case 3: return .string(["a", "b", "B", "zz", "é"][n % 5])
        case 4: return .object(["deep": .int(Int64(n % 3))])
        case 5: return .int(Int64(1) << 60 + Int64(n % 3))  // beyond a double's exact integers
        default: return .int(Int64(n % 20))
        }
    }

    func queries(_ n: Int) -> [TreeQuery] {
        var result: [TreeQuery] = []
        for order in [TreeQuery.OrderBy.child(path("score")), .value] {
            for limit in [TreeQuery.Limit.first(3), .last(4), .first(50)] {
                var q = TreeQuery(orderBy: order, limit: limit)
                result.append(q)
                q.start = .init(.int(Int64(n % 15)), inclusive: n % 2 == 0)
                result.append(q)
                q.end = .init(.string("b"), inclusive: n % 3 == 0)
                result.append(q)
                q.start = .init(.int(Int64(n % 20)), inclusive: n % 2 == 1, key: "k\(n % 40)")
                result.append(q)
                q.start = nil
                q.end = .init(.double(2.5), inclusive: true, key: "k7")
                result.append(q)
            }
        }
        return result
    }

    @Test func indexesBuiltOnOneNodeStayExactThroughWritesOnAnother() throws {
        let url = try PostgresCluster.shared().makeDatabase()
        let a = try PostgresEngine(url: url), b = try PostgresEngine(url: url)
        defer { a.close(); b.close() }
        let location = path("items")
        for i in 0..<40 {
            if let score = Self.score(i) { try a.writeSync(.set(WriteEntry(path: path("items/k\(i)/score"), value: score)), check: nil) }
            try a.writeSync(.set(WriteEntry(path: path("items/k\(i)/name"), value: .string("n\(i)"))), check: nil)
        }
        a.buildQueryIndex(at: location, spec: "score")
        a.buildQueryIndex(at: location, spec: ".value")
        for round in 0..<30 {
            let writer = round % 2 == 0 ? b : a  // the other node's writer keeps the index too
            let key = "k\((round * 7) % 45)"
            switch round % 5 {
            case 0: try writer.writeSync(.set(WriteEntry(path: path("items/\(key)"), value: nil)), check: nil)
            case 1: try writer.writeSync(.set(WriteEntry(path: path("items/\(key)/score"), value: Self.score(round * 3))), check: nil)
            case 2: try writer.writeSync(.update(base: location, entries: [
                WriteEntry(path: path("items/\(key)/score"), value: Self.score(round)),
                WriteEntry(path: path("items/\(key)x/score"), value: .int(3)),
            ]), check: nil)
            case 3: try writer.writeSync(.set(WriteEntry(path: path("items/\(key)/score/deep"), value: .int(1))), check: nil)
            default: try writer.writeSync(.set(WriteEntry(path: path("items/\(key)/other"), value: .int(1))), check: nil)
            }
            if round == 20 {
                // Replacing the location drops its indexes (rebuilt just below, on the other node).
                try b.writeSync(.set(WriteEntry(path: location, value: .object(["z": .object(["score": .int(5)]), "y": .int(2)]))), check: nil)
                b.buildQueryIndex(at: location, spec: "score")
                b.buildQueryIndex(at: location, spec: ".value")
            }
            for engine in [a, b] {
                for query in queries(round) {
                    let (indexed, memory) = try engine.readSync { view in
                        (try view.query(query, at: location), query.apply(to: try view.value(at: location)))
                    }
                    #expect(indexed == memory, "round \(round), \(query)")
                }
            }
        }
        // The answers came from the index: it is built and has a row per child.
        let rows = try a.readSync { view in
            try (view as! PostgresTreeView).connection.query("SELECT count(*) FROM query_index WHERE location = 'items' AND spec = 'score'").int64(0, 0)
        }
        let children = try a.readSync { try $0.childKeys(at: location).count }
        #expect(rows == Int64(children))
    }

    @Test func theFirstQueryAsksForTheIndexAndTheQueryUsesIt() throws {
        let url = try PostgresCluster.shared().makeDatabase()
        let engine = try PostgresEngine(url: url)
        defer { engine.close() }
        let children = (0..<300).map { i in ("c\(i)", JSONValue.object(["at": .int(Int64(i))])) }
        try engine.writeSync(.set(WriteEntry(path: path("log"), value: .object(Dictionary(uniqueKeysWithValues: children)))), check: nil)
        let query = TreeQuery(orderBy: .child(path("at")), limit: .last(3))
        let first = try engine.readSync { try $0.query(query, at: path("log")) }  // in memory; asks for the index
        engine.buildQueryIndex(at: path("log"), spec: "at")  // waits for the writer (already queued)
        try engine.writeSync(.set(WriteEntry(path: path("log/new/at"), value: .int(1_000))), check: nil)
        let second = try engine.readSync { try $0.query(query, at: path("log")) }
        #expect(first == .object(["c297": .object(["at": 297]), "c298": .object(["at": 298]), "c299": .object(["at": 299])]))
        #expect(second == .object(["c298": .object(["at": 298]), "c299": .object(["at": 299]), "new": .object(["at": 1_000])]))
        let plan = try engine.readSync { view in
            let result = try (view as! PostgresTreeView).connection.query("""
                EXPLAIN SELECT child_key FROM query_index WHERE location = 'log' AND spec = 'at'
                ORDER BY rank DESC, num DESC, str DESC, key_order DESC LIMIT 3
                """)
            return (0..<result.rowCount).map { result.text($0, 0) }.joined(separator: "\n")
        }
        #expect(plan.contains("Index Scan Backward using query_index_order"), "\(plan)")
    }
}
