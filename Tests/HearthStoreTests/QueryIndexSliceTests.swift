import HearthJSON
@testable import HearthSQLite
import HearthStore
import HearthTesting
import Testing

/// A query index is built a slice of children at a time, each slice its own transaction
/// on the writer, with writes in between: the finished index still answers exactly what
/// the in-memory query answers.
extension QueryIndexTests {
    static let childrenPerSlice = 7

    func slicedStore(_ directory: String? = nil) throws -> SQLiteTreeStore {
        var options = StoreOptions()
        options.queryIndexChildrenPerSlice = Self.childrenPerSlice
        return try SQLiteTreeStore(directory: directory ?? dir.path, options: options)
    }

    /// Rows of `query_index_built` for `location`, and rows of `query_index` there.
    func indexRows(_ store: SQLiteTreeStore, _ location: String) throws -> (built: Int64, rows: Int64) {
        try store.readSync { view in
            let connection = (view as! SQLiteTreeView).connection
            let built = try connection.scalarInt("SELECT count(*) FROM query_index_built WHERE location = '\(location)'") ?? -1
            let rows = try connection.scalarInt("SELECT count(*) FROM query_index WHERE location = '\(location)'") ?? -1
            return (built, rows)
        }
    }

    func expectIndexedEqualsMemory(_ store: SQLiteTreeStore, _ g: inout Generator, _ what: String) throws {
        let location = path("items")
        for query in queries(&g) {
            let (indexed, memory) = try store.readSync { view in
                (try view.query(query, at: location), query.apply(to: try view.value(at: location)))
            }
            #expect(indexed == memory, "\(what): \(query)")
        }
    }

    /// One of the writes the random test makes, into `items` (never replacing it).
    func randomWriteInside(_ store: SQLiteTreeStore, _ g: inout Generator) throws {
        let location = path("items")
        let key = "k\(g.next(90))"
        switch g.next(5) {
        case 0: try store.writeSync(.set(WriteEntry(path: path("items/\(key)"), value: nil)))
        case 1: try store.writeSync(.set(WriteEntry(path: path("items/\(key)/score"), value: randomScore(&g))))
        case 2: try store.writeSync(.set(WriteEntry(path: path("items/\(key)"), value: .object(["score": randomScore(&g) ?? .int(1)]))))
        case 3: try store.writeSync(.update(base: location, entries: [
            WriteEntry(path: path("items/\(key)/score"), value: randomScore(&g)),
            WriteEntry(path: path("items/\(["a", "zz", "0", "k5x"][g.next(4)])/score"), value: .int(Int64(g.next(9)))),
        ]))
        default: try store.writeSync(.set(WriteEntry(path: path("items/\(key)/score/deep"), value: .int(1))))
        }
    }

    func seed(_ store: SQLiteTreeStore, _ g: inout Generator, count: Int = 60) throws {
        for i in 0..<count {
            if let score = randomScore(&g) { try store.writeSync(.set(WriteEntry(path: path("items/k\(i)/score"), value: score))) }
            try store.writeSync(.set(WriteEntry(path: path("items/k\(i)/name"), value: .string("n\(i)"))))
        }
    }

    @Test func writesBetweenSlicesLeaveTheIndexExact() throws {
        for seedValue in [7, 8, 9] as [UInt64] {
            let directory = TemporaryDirectory(prefix: "hearth-index-slices")
            let store = try slicedStore(directory.path)
            var g = Generator(state: seedValue)
            try seed(store, &g)
            var slices = 0
            var done = try store.buildQueryIndexSlice(at: path("items"), spec: "score", start: true)
            while !done {
                slices += 1
                #expect(try indexRows(store, "items").built == 0, "not used before its last slice")
                for _ in 0..<3 { try randomWriteInside(store, &g) }
                done = try store.buildQueryIndexSlice(at: path("items"), spec: "score", start: false)
            }
            #expect(slices >= 60 / Self.childrenPerSlice - 1, "the build took \(slices + 1) slices")
            #expect(try indexRows(store, "items").built == 1)
            try expectIndexedEqualsMemory(store, &g, "seed \(seedValue), after the build")
            for _ in 0..<20 { try randomWriteInside(store, &g) }
            try expectIndexedEqualsMemory(store, &g, "seed \(seedValue), writes after the build")
        }
    }

    @Test func aWriteReplacingTheLocationGivesUpItsBuild() throws {
        let store = try slicedStore()
        var g = Generator(state: 11)
        try seed(store, &g)
        #expect(try !store.buildQueryIndexSlice(at: path("items"), spec: "score", start: true))
        #expect(try indexRows(store, "items").rows > 0)
        try store.writeSync(.set(WriteEntry(path: path("items"), value: .object([
            "b": .object(["score": .int(2)]), "a": .object(["score": .int(1)]),
        ]))))
        #expect(try indexRows(store, "items").rows == 0, "the replaced location's rows are dropped")
        #expect(try store.buildQueryIndexSlice(at: path("items"), spec: "score", start: false), "given up")
        #expect(try indexRows(store, "items") == (0, 0))
        // Asked again, it is built from the new data.
        store.buildQueryIndex(at: path("items"), spec: "score")
        #expect(try indexRows(store, "items") == (1, 2))
        let query = TreeQuery(orderBy: .child(path("score")), limit: .first(1))
        #expect(try store.readSync { try $0.query(query, at: path("items")) } == .object(["a": .object(["score": 1])]))
    }

    @Test func aBuildCutShortByARestartLeavesNoRowThatAnswers() throws {
        let directory = TemporaryDirectory(prefix: "hearth-index-restart")
        var g = Generator(state: 13)
        do {
            let store = try slicedStore(directory.path)
            try seed(store, &g)
            #expect(try !store.buildQueryIndexSlice(at: path("items"), spec: "score", start: true))
        }
        let store = try slicedStore(directory.path)
        let left = try indexRows(store, "items")
        #expect(left.built == 0 && left.rows > 0, "rows of the first slice stay, unused: \(left)")
        // The writer does not keep those rows in step: delete every child they name.
        for i in 0..<60 { try store.writeSync(.set(WriteEntry(path: path("items/k\(i)"), value: nil))) }
        try store.writeSync(.set(WriteEntry(path: path("items/z/score"), value: .int(1))))
        store.buildQueryIndex(at: path("items"), spec: "score")
        #expect(try indexRows(store, "items") == (1, 1), "the new build cleared what the first left")
        try expectIndexedEqualsMemory(store, &g, "after a restart")
    }

    @Test func buildingQueuesEverySliceUntilTheIndexIsBuilt() throws {
        let store = try slicedStore()
        var g = Generator(state: 17)
        try seed(store, &g, count: 100)
        store.buildQueryIndex(at: path("items"), spec: "score")
        store.buildQueryIndex(at: path("items"), spec: ".value")
        #expect(try indexRows(store, "items").built == 2)
        try expectIndexedEqualsMemory(store, &g, "built through the writer's queue")
    }
}
