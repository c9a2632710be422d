import HearthJSON
import HearthStore
import HearthTesting
import Testing
@testable import HearthPostgres

/// Locations whose keys are canonically equal as Swift strings (`é`, `e\u{301}`) are two
/// locations, each with its own index.
extension PostgresQueryIndexTests {
    @Test func canonicallyEqualLocationsHaveTheirOwnIndexes() throws {
        let url = try PostgresCluster.shared().makeDatabase()
        let engine = try PostgresEngine(url: url)
        defer { engine.close() }
        let locations = [DataPath(uncheckedSegments: ["\u{E9}"]), DataPath(uncheckedSegments: ["e\u{301}"])]
        for (index, location) in locations.enumerated() {
            for i in 0..<5 {
                let child = DataPath(uncheckedSegments: location.segments + ["k\(i)", "score"])
                try engine.writeSync(.set(WriteEntry(path: child, value: .int(Int64(100 * index + i)))), check: nil)
            }
            engine.buildQueryIndex(at: location, spec: "score")
        }
        let query = TreeQuery(orderBy: .child(path("score")), limit: .last(2))
        for (index, location) in locations.enumerated() {
            let indexed = try engine.readSync { view in try PostgresQueryIndex.query(query, at: location, view: view as! PostgresTreeView) }
            let expected: JSONValue = .object(["k3": ["score": .int(Int64(100 * index + 3))], "k4": ["score": .int(Int64(100 * index + 4))]])
            #expect(indexed == expected, "\(location) answered from its own index")
        }
    }
}
