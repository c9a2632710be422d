import HearthJSON
import HearthSQLite
import HearthStore
import HearthTesting
import Testing

/// `limitToLast(n)` in key order (`$key`, or priority order with no priority below the
/// location) answered from the last children of the location: always what the whole
/// read answers, and taken whenever it can be.
@Suite struct KeyOrderQueryTests {
    let dir = TemporaryDirectory(prefix: "hearth-keyorder")
    func path(_ text: String) -> DataPath { try! DataPath(string: text) }

    /// Keys of every shape the two orders treat differently: integers (first, in numeric
    /// order), keys that extend another with a byte below `/`, push IDs, canonically equal
    /// spellings.
    static let keys = ["-Na1", "-Nb2", "-Nz9", "0", "7", "12", "-3", "007", "2147483648", "a", "a-b", "a b", "a(", "a-",
                       "b", "ba", "b!", "é", "e\u{301}", "zz", "z", "A", "_x"]

    func write(_ store: SQLiteTreeStore, _ g: inout QueryIndexTests.Generator) throws {
        let key = Self.keys[g.next(Self.keys.count)]
        let child = path("list").segments + [key]
        switch g.next(5) {
        case 0: try store.writeSync(.set(WriteEntry(path: DataPath(uncheckedSegments: child), value: nil)))
        case 1: try store.writeSync(.set(WriteEntry(path: DataPath(uncheckedSegments: child), value: .int(Int64(g.next(9))))))
        case 2: try store.writeSync(.set(WriteEntry(path: DataPath(uncheckedSegments: child + ["x"]), value: .string("v"))))
        default: try store.writeSync(.set(WriteEntry(path: DataPath(uncheckedSegments: child), value: .object(["t": .int(Int64(g.next(9)))]))))
        }
    }

    @Test(arguments: [1, 2, 3] as [UInt64])
    func theLastChildrenAreWhatTheWholeReadAnswers(seed: UInt64) throws {
        let store = try SQLiteTreeStore(directory: dir.path + "/\(seed)")
        var g = QueryIndexTests.Generator(state: seed)
        var answeredFromTheEnd = 0
        for _ in 0..<120 {
            try write(store, &g)
            for n in [1, 2, 3, 5, 8, 30] {
                for order in [TreeQuery.OrderBy.key, .priority] {
                    let query = TreeQuery(orderBy: order, limit: .last(n))
                    let (answer, whole, keys) = try store.readSync { view in
                        let value = try view.value(at: path("list"))
                        return (try view.query(query, at: path("list")), query.apply(to: value), value.objectValue?.keys.map(\.string) ?? [])
                    }
                    #expect(answer == whole, "n \(n), \(order)")
                    let fromTheEnd = try store.childrenInKeyOrder(query, at: path("list"))
                    if let fromTheEnd {
                        #expect(fromTheEnd == whole)
                        answeredFromTheEnd += 1
                    }
                    // Taken whenever there are n keys that are not integers.
                    let others = keys.filter { FirebaseKeyOrder.int32Value($0) == nil }.count
                    #expect((fromTheEnd != nil) == (others >= n), "n \(n), \(others) other keys")
                }
            }
        }
        #expect(answeredFromTheEnd > 600)
    }

    @Test func keysThatExtendAnObjectChildsKeyAreFound() throws {
        let store = try SQLiteTreeStore(directory: dir.path)
        // Rows in path order: "a b/…", "a(", "a-b", "a/x": the object "a" is found first
        // from the end, though "a-b" is last in key order.
        try store.writeSync(.set(WriteEntry(path: path("list"), value: .object([
            "a": .object(["x": 1]), "a-b": 2, "a b": .object(["y": 3]), "a(": 4,
        ]))))
        let answer = try store.childrenInKeyOrder(TreeQuery(orderBy: .key, limit: .last(1)), at: path("list"))
        #expect(answer == .object(["a-b": 2]))
        let two = try store.childrenInKeyOrder(TreeQuery(orderBy: .key, limit: .last(2)), at: path("list"))
        #expect(two == .object(["a-b": 2, "a(": 4]))
    }

    /// UTF-16 order puts U+E000 after U+1F600 (a surrogate pair, D83D DE00); UTF-8 bytes
    /// the other way round. A key with such a character is left to the whole read.
    @Test func aCharacterFromUE000OnSendsTheQueryToTheWholeRead() throws {
        let store = try SQLiteTreeStore(directory: dir.path)
        try store.writeSync(.set(WriteEntry(path: path("list"), value: .object(["a": 1, "\u{E000}": 2, "\u{1F600}": 3]))))
        let query = TreeQuery(orderBy: .key, limit: .last(1))
        #expect(try store.childrenInKeyOrder(query, at: path("list")) == nil)
        #expect(try store.readSync { try $0.query(query, at: path("list")) } == .object(["\u{E000}": 2]))
    }

    @Test func aPrioritySendsPriorityOrderToTheWholeRead() throws {
        let store = try SQLiteTreeStore(directory: dir.path)
        try store.writeSync(.set(WriteEntry(path: path("list"), value: .object([
            "a": .object([".priority": 9, "v": 1]), "b": .object(["v": 2]),
        ]))))
        let byPriority = TreeQuery(orderBy: .priority, limit: .last(1))
        #expect(try store.childrenInKeyOrder(byPriority, at: path("list")) == nil)
        #expect(try store.readSync { try $0.query(byPriority, at: path("list")) } == .object(["a": .object([".priority": 9, "v": 1])]))
        let byKey = TreeQuery(orderBy: .key, limit: .last(1))
        #expect(try store.childrenInKeyOrder(byKey, at: path("list")) == .object(["b": .object(["v": 2])]))
    }

    @Test func pastItsBoundsTheWholeLocationIsRead() throws {
        let store = try SQLiteTreeStore(directory: dir.path)
        // Push IDs sort before integer keys in path order: the integers are passed over
        // from the end.
        var children: [JSONKey: JSONValue] = ["-Na": 1, "-Nb": 2]
        for i in 0..<10 { children[JSONKey("\(i)")] = .int(Int64(i)) }
        try store.writeSync(.set(WriteEntry(path: path("few"), value: .object(children))))
        for i in 10..<100 { children[JSONKey("\(i)")] = .int(Int64(i)) }
        try store.writeSync(.set(WriteEntry(path: path("many"), value: .object(children))))
        let last = TreeQuery(orderBy: .key, limit: .last(1))
        #expect(try store.childrenInKeyOrder(last, at: path("few")) == .object(["-Nb": 2]))
        #expect(try store.childrenInKeyOrder(last, at: path("many")) == nil, "past the probes")
        #expect(try store.readSync { try $0.query(last, at: path("many")) } == .object(["-Nb": 2]))

        let list = (0..<1_200).map { (JSONKey("k\(1_000 + $0)"), JSONValue.int(Int64($0))) }
        try store.writeSync(.set(WriteEntry(path: path("long"), value: .object(Dictionary(uniqueKeysWithValues: list)))))
        let atTheBound = TreeQuery(orderBy: .key, limit: .last(1_000))
        #expect(try store.childrenInKeyOrder(atTheBound, at: path("long"))?.objectValue?.count == 1_000)
        let past = TreeQuery(orderBy: .key, limit: .last(1_001))
        #expect(try store.childrenInKeyOrder(past, at: path("long")) == nil)
        #expect(try store.readSync { try $0.query(past, at: path("long")) }.objectValue?.count == 1_001)
    }
}
