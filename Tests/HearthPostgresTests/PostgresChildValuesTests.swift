import HearthJSON
import HearthStore
import HearthTesting
import Testing
@testable import HearthPostgres

/// A page of children's values read in one statement (`PostgresTreeView.childValues`):
/// each the value `value(at:)` reads, whatever the neighbours' paths share with it. And the
/// walks' probes read ahead (`ReadAheadProbes`): a page, or every key of a location, in a
/// few round trips rather than one per child.
extension PostgresQueryIndexTests {
    @Test func pagesAndKeysTakeAFewRoundTrips() throws {
        let url = try PostgresCluster.shared().makeDatabase()
        let engine = try PostgresEngine(url: url)
        defer { engine.close() }
        let count = 2_000
        let key = { (i: Int) in "-Nk" + String(String(i + 10_000).dropFirst()) }
        var children: [String: JSONValue] = [:]
        for i in 0..<count { children[key(i)] = .object(["v": .int(Int64(i)), "note": .string("x")]) }
        try engine.writeSync(.set(WriteEntry(path: path("chat"), value: .object(children))), check: nil)
        let queries = [
            TreeQuery(orderBy: .key, start: TreeQuery.Bound(.string(key(500)), inclusive: false), limit: .first(50)),
            TreeQuery(orderBy: .key, end: TreeQuery.Bound(.string(key(1_500)), inclusive: false), limit: .last(50)),
            TreeQuery(orderBy: .key, limit: .first(50)),
        ]
        try engine.readSync { view in
            let view = view as! PostgresTreeView
            let whole = try view.value(at: path("chat"))
            for query in queries {
                let before = view.connection.exchanges
                let answer = try #require(try view.childrenInKeyOrder(query, at: path("chat")))
                let trips = view.connection.exchanges - before
                #expect(answer == query.apply(to: whole), "\(query)")
                #expect(trips <= 12, "\(query): \(trips) round trips for a page of 50")
            }
            let before = view.connection.exchanges
            #expect(try view.childKeys(at: path("chat")) == (0..<count).map(key))
            let trips = view.connection.exchanges - before
            #expect(trips <= 4_000 / ReadAheadProbes.maxWindow + 10, "\(trips) round trips for \(count) keys")
        }
    }

    @Test func aPageOfChildValuesInOneStatementIsWhatEachReadAnswers() throws {
        let url = try PostgresCluster.shared().makeDatabase()
        let engine = try PostgresEngine(url: url)
        defer { engine.close() }
        // Siblings whose paths extend a key's by a byte either side of `/`, and the byte
        // just past it (`a0`: the end of `a`'s descendants' range), as leaves and objects.
        let list: JSONValue = .object([
            "a": .object(["x": .int(1), "y": .object(["z": .string("deep"), "w": .object(["v": .bool(true)])])]),
            "a-b": .string("sibling"),
            "a,c": .object(["x": .int(2)]),
            "a0": .double(2.5),
            "a0b": .object(["q": .int(3)]),
            "b": .string("leaf"),
            "é": .object(["e": .int(4)]),
            "\u{1F600}": .int(5),
            "12": .object(["n": .int(6)]),
        ])
        try engine.writeSync(.set(WriteEntry(path: path("list"), value: list)), check: nil)
        try engine.writeSync(.set(WriteEntry(path: path("other/a"), value: .int(7))), check: nil)
        let pages: [[String]] = [
            ["a", "a0", "b"], ["a0", "a"], ["a-b", "a,c", "a0b", "12"], ["é", "\u{1F600}", "missing", "a"], ["missing"], [],
            ["a", "a-b", "a,c", "a0", "a0b", "b", "é", "\u{1F600}", "12"],
        ]
        try engine.readSync { view in
            let view = view as! PostgresTreeView
            for page in pages {
                var oneByOne: [JSONKey: JSONValue] = [:]
                for key in page {
                    let value = try view.value(at: DataPath(uncheckedSegments: ["list", key]))
                    if value != .null { oneByOne[JSONKey(key)] = value }
                }
                #expect(try view.childValues(page, at: path("list")) == oneByOne, "\(page)")
            }
            #expect(try view.childValues(["a"], at: path("other")) == [JSONKey("a"): .int(7)])
            guard case .object(let children) = list else { return }
            #expect(try view.childValues(children.keys.map(\.string), at: path("list")) == children)
        }
    }
}
