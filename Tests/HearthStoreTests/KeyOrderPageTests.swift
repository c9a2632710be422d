import HearthJSON
@testable import HearthStore
import HearthSQLite
import HearthTesting
import Testing

/// Key-order queries with bounds and either limit (pages: `startAfter(k)` +
/// `limitToFirst(n)`, `endBefore(k)` + `limitToLast(n)`, a first page with integer keys
/// before the others) answered from the rows: always what the whole read answers.
@Suite struct KeyOrderPageTests {
    let dir = TemporaryDirectory(prefix: "hearth-keyorder-pages")
    func path(_ text: String) -> DataPath { try! DataPath(string: text) }

    /// Keys of every shape the orders treat differently: integer keys (`007` and `-0` are
    /// ones), keys extending another with a byte below `/`, runs no integer key can start
    /// (`2024-…`, eleven digits), push IDs, canonically equal spellings.
    static let keys = ["-Na1", "-Nb2", "-Nz9", "0", "7", "12", "-3", "-0", "007", "2147483648", "3000000000",
                       "17012345678901", "2024-01-01", "2024-01-02", "2024", "a", "a-b", "a-b-c", "a b", "a(",
                       "a-", "ab", "b", "ba", "b!", "é", "e\u{301}", "zz", "z", "A", "_x"]
    /// Bounds: keys above, their prefixes, strings between them; integer keys and a high
    /// character, which leave the query to the whole read.
    static let bounds = ["", "a", "a-", "a-b", "a!", "a-b-", "b", "-N", "-Nb2", "2024", "2024-01-01", "2", "zz", "é",
                         "m", "7", "\u{E000}"]

    static func randomWrite(_ store: SQLiteTreeStore, _ g: inout SplitMix64) throws {
        let key = keys[Int.random(in: 0..<keys.count, using: &g)]
        let child = ["list", key]
        let entry: WriteEntry
        switch Int.random(in: 0..<5, using: &g) {
        case 0: entry = WriteEntry(path: DataPath(uncheckedSegments: child), value: nil)
        case 1: entry = WriteEntry(path: DataPath(uncheckedSegments: child), value: .int(Int64.random(in: 0..<9, using: &g)))
        case 2: entry = WriteEntry(path: DataPath(uncheckedSegments: child + ["x"]), value: .string("v"))
        default: entry = WriteEntry(path: DataPath(uncheckedSegments: child), value: .object(["t": 1]))
        }
        try store.writeSync(.set(entry))
    }

    static func randomQuery(_ g: inout SplitMix64) -> TreeQuery {
        func bound() -> TreeQuery.Bound? {
            guard Bool.random(using: &g) else { return nil }
            return TreeQuery.Bound(.string(bounds[Int.random(in: 0..<bounds.count, using: &g)]),
                                   inclusive: Bool.random(using: &g))
        }
        let n = [1, 2, 3, 5, 8, 30][Int.random(in: 0..<6, using: &g)]
        let limit: TreeQuery.Limit = Bool.random(using: &g) ? .first(n) : .last(n)
        if Int.random(in: 0..<5, using: &g) == 0 { return TreeQuery(orderBy: .priority, limit: limit) }
        return TreeQuery(orderBy: .key, start: bound(), end: bound(), limit: limit)
    }

    @Test(arguments: [1, 2, 3] as [UInt64])
    func boundedPagesAreWhatTheWholeReadAnswers(seed: UInt64) throws {
        let store = try SQLiteTreeStore(directory: dir.path + "/\(seed)")
        var g = SplitMix64(seed: seed)
        var (asked, taken, takenFirst, takenBounded) = (0, 0, 0, 0)
        for _ in 0..<150 {
            try Self.randomWrite(store, &g)
            for _ in 0..<12 {
                let query = Self.randomQuery(&g)
                let (answer, whole) = try store.readSync { view in
                    (try view.query(query, at: path("list")), query.apply(to: try view.value(at: path("list"))))
                }
                #expect(answer == whole, "\(query)")
                asked += 1
                guard let fromTheRows = try store.childrenInKeyOrder(query, at: path("list")) else { continue }
                #expect(fromTheRows == whole, "\(query)")
                taken += 1
                if case .first? = query.limit { takenFirst += 1 }
                if query.start != nil || query.end != nil { takenBounded += 1 }
            }
        }
        // Most queries are taken, of both limits, with bounds too.
        #expect(taken * 2 > asked, "\(taken) of \(asked)")
        #expect(takenFirst * 5 > asked && takenBounded * 5 > asked, "\(takenFirst) first, \(takenBounded) bounded")
    }

    /// Paging a chat of push IDs (and a few keys of other shapes) forward with
    /// `startAfter` and back with `endBefore`: every page from the rows, together the
    /// whole location in key order.
    @Test func pagingForwardAndBackCoversTheLocation() throws {
        let store = try SQLiteTreeStore(directory: dir.path)
        var children: [JSONKey: JSONValue] = ["a": .object(["x": 1]), "a-b": 2, "a b": .object(["y": 3]), "5": 4, "-2": 5]
        for i in 0..<300 { children[JSONKey("-Nm\(1_000 + i * 7)")] = .object(["text": .string("m\(i)")]) }
        try store.writeSync(.set(WriteEntry(path: path("chat"), value: .object(children))))
        let order = FirebaseKeyOrder.sorted(children.keys.map(\.string))

        var forward: [String] = []
        var page = try store.childrenInKeyOrder(TreeQuery(orderBy: .key, limit: .first(7)), at: path("chat"))
        while let keys = page?.objectValue?.keys.map(\.string), !keys.isEmpty {
            forward += FirebaseKeyOrder.sorted(keys)
            let next = TreeQuery(orderBy: .key, start: .init(.string(forward.last!), inclusive: false), limit: .first(7))
            page = try store.childrenInKeyOrder(next, at: path("chat"))
            #expect(page != nil, "after \(forward.last!)")
        }
        #expect(page == .null)
        #expect(forward == order)

        var back: [String] = []
        page = try store.childrenInKeyOrder(TreeQuery(orderBy: .key, limit: .last(9)), at: path("chat"))
        while let keys = page?.objectValue?.keys.map(\.string), !keys.isEmpty {
            back = FirebaseKeyOrder.sorted(keys) + back
            let before = TreeQuery(orderBy: .key, end: .init(.string(back.first!), inclusive: false), limit: .last(9))
            page = try store.childrenInKeyOrder(before, at: path("chat"))
            if page == nil { break }  // the last page holds the integer keys: the whole read
        }
        let rest = try store.readSync { view in
            try view.query(TreeQuery(orderBy: .key, end: .init(.string(back.first!), inclusive: false)), at: path("chat"))
        }
        #expect(FirebaseKeyOrder.sorted(rest.objectValue?.keys.map(\.string) ?? []) + back == order)
        // 303 other keys in pages of 9: the last 6 share a page with the integer keys.
        #expect(back.count == 297)
    }

    /// Rows in path order: "a b/…", "a-b", "a-c", "a/x". From the start the object "a" is
    /// found last, though it is first in key order; with `endAt("a")` the walk stops at
    /// "a b" before it; from the end below "a-c", its rows are past the bound.
    @Test func objectChildrenPastWhereTheWalkStopsAreFound() throws {
        let store = try SQLiteTreeStore(directory: dir.path)
        try store.writeSync(.set(WriteEntry(path: path("list"), value: .object([
            "a": .object(["x": 1]), "a-b": 2, "a-c": 3, "a b": .object(["y": 4]),
        ]))))
        let first = TreeQuery(orderBy: .key, start: .init(.string("a"), inclusive: true), limit: .first(1))
        #expect(try store.childrenInKeyOrder(first, at: path("list")) == .object(["a": .object(["x": 1])]))
        let upToA = TreeQuery(orderBy: .key, end: .init(.string("a"), inclusive: true), limit: .first(3))
        #expect(try store.childrenInKeyOrder(upToA, at: path("list")) == .object(["a": .object(["x": 1])]))
        // From the end below "a-c": the object "a" is a prefix of the bound, its rows past it.
        let beforeAC = TreeQuery(orderBy: .key, start: .init(.string(""), inclusive: true),
                                 end: .init(.string("a-c"), inclusive: false), limit: .last(3))
        #expect(try store.childrenInKeyOrder(beforeAC, at: path("list")) == .object([
            "a": .object(["x": 1]), "a b": .object(["y": 4]), "a-b": 2,
        ]))
        let none = TreeQuery(orderBy: .key, start: .init(.string("b"), inclusive: true), limit: .first(3))
        #expect(try store.childrenInKeyOrder(none, at: path("list")) == .null)
    }

    /// A first page with no start bound: the integer keys first, from the rows that can
    /// hold them, a run of dates passed in one probe.
    @Test func aFirstPageCollectsTheIntegerKeysFirst() throws {
        let store = try SQLiteTreeStore(directory: dir.path)
        var children: [JSONKey: JSONValue] = ["5": 1, "12": 2, "-3": 3, "-Nab": 4, "007": 5]
        for day in 0..<500 { children[JSONKey("2024-\(1_000 + day)")] = .int(Int64(day)) }
        try store.writeSync(.set(WriteEntry(path: path("log"), value: .object(children))))
        let firstFive = TreeQuery(orderBy: .key, limit: .first(5))
        #expect(try store.childrenInKeyOrder(firstFive, at: path("log")) == .object(["-3": 3, "5": 1, "007": 5, "12": 2, "-Nab": 4]))
        let firstSeven = TreeQuery(orderBy: .key, limit: .first(7))
        #expect(try store.childrenInKeyOrder(firstSeven, at: path("log"))?.objectValue?.keys.contains("2024-1001") == true)
    }

    @Test func pastItsBoundsTheWholeLocationIsRead() throws {
        let store = try SQLiteTreeStore(directory: dir.path)
        var children: [JSONKey: JSONValue] = ["-Na": 1]
        for i in 0..<100 { children[JSONKey("\(i)")] = .int(Int64(i)) }
        try store.writeSync(.set(WriteEntry(path: path("array"), value: .object(children))))
        let first = TreeQuery(orderBy: .key, limit: .first(1))
        #expect(try store.childrenInKeyOrder(first, at: path("array")) == nil, "past the probes: 100 integer keys")
        #expect(try store.readSync { try $0.query(first, at: path("array")) } == .object(["0": 0]))
        // Bounds that are integer keys, or hold a character from U+E000 on.
        for bound in ["5", "\u{E000}"] {
            let query = TreeQuery(orderBy: .key, start: .init(.string(bound), inclusive: true), limit: .first(1))
            #expect(try store.childrenInKeyOrder(query, at: path("array")) == nil, "\(bound)")
        }
        // A bound on priority order, or past the largest limit.
        let byPriority = TreeQuery(orderBy: .priority, start: .init(.null, inclusive: true), limit: .first(1))
        #expect(try store.childrenInKeyOrder(byPriority, at: path("array")) == nil)
        let past = TreeQuery(orderBy: .key, start: .init(.string("-"), inclusive: true), limit: .first(TreeKeys.maxInKeyOrder + 1))
        #expect(try store.childrenInKeyOrder(past, at: path("array")) == nil)
        let atTheBound = TreeQuery(orderBy: .key, start: .init(.string("-"), inclusive: true), limit: .first(TreeKeys.maxInKeyOrder))
        #expect(try store.childrenInKeyOrder(atTheBound, at: path("array")) == .object(["-Na": 1]))
    }

    @Test(arguments: [
        ("2024-01-01", "2024."), ("12345678901", "12345678902"), ("3000000000", "3000000001"), ("-a", "-b"),
        ("000000000004294967296", "000000000004294967297"),
    ])
    func runsNoIntegerKeyCanStart(key: String, next: String) {
        #expect(TreeKeys.nonIntegerRun(key) == next)
    }

    @Test func runsThatCannotBeSkipped() {
        #expect(TreeKeys.nonIntegerRun("-") == nil)
        #expect(TreeKeys.nonIntegerRun("1é") == nil, "the next string would not be UTF-8")
    }
}
