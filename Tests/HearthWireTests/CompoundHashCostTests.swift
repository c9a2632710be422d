import HearthJSON
@testable import HearthWire
import Testing

/// What one compound-hash answer may cost: O(n log n) in the value whatever the cuts
/// (counted in `CompoundHash.Work` units, never timed), at most `maxCutPaths` cuts and
/// `workBudget` units (past either, nil: the whole value is sent), and the same ranges as
/// before for the cuts an SDK sends.
@Suite struct CompoundHashCostTests {
    /// `{"a": {"k000000": "v", …}}` and one cut at each of its leaves: every cut under one
    /// child, the shape that made each range sort that child again.
    static func oneChild(_ count: Int) -> (value: JSONValue, posts: [String]) {
        let keys = (0..<count).map { "k" + String(1_000_000 + $0).dropFirst() }
        var members: [JSONKey: JSONValue] = [:]
        for key in keys { members[JSONKey(key)] = "v" }
        return (.object(["a": .object(members)]), keys.dropLast().map { "/a/\($0)" })
    }

    /// Every range's hash wrong, so every range is cut out: the most slicing cuts can ask for.
    static func wrong(_ posts: [String]) -> [String] {
        [String](repeating: "x", count: posts.count + 1)
    }

    /// The work of answering `posts` over `value` with no limit, and the answer.
    static func unbounded(_ value: JSONValue, _ posts: [String]) -> (spent: Int, ranges: [CompoundHash.Range]?) {
        var work = CompoundHash.Work(limit: .max)
        let ranges = CompoundHash.changedRanges(value, hashes: wrong(posts), posts: posts, work: &work)
        return (work.spent, ranges)
    }

    @Test func cutsUnderOneChildCostNLogNNotNSquared() throws {
        let (small, smallPosts) = Self.oneChild(1_000)
        let (large, largePosts) = Self.oneChild(10_000)
        let (smallWork, _) = Self.unbounded(small, smallPosts)
        let (largeWork, ranges) = Self.unbounded(large, largePosts)
        let answer = try #require(ranges)
        // n log2 n is 132,877 for 10,000 nodes; each range re-sorting the child (as before)
        // would be 10,000 times that. Ten times the cuts cost about ten times the work.
        #expect(largeWork < 10 * 132_877, "\(largeWork) units for 10,000 cuts")
        #expect(largeWork < 14 * smallWork, "\(smallWork) → \(largeWork) units")
        // And the answer is right: each range holds its one key.
        #expect(answer.count == 10_000)
        #expect(answer[0] == .init(start: nil, end: "/a/k000000", value: .object(["a": .object(["k000000": "v"])])))
        #expect(answer[5_000] == .init(start: "/a/k004999", end: "/a/k005000", value: .object(["a": .object(["k005000": "v"])])))
        #expect(answer[9_999] == .init(start: "/a/k009998", end: nil, value: .object(["a": .object(["k009999": "v"])])))
    }

    @Test func moreCutsThanTheBoundAreNotUsed() {
        let (value, posts) = Self.oneChild(CompoundHash.maxCutPaths + 2)
        #expect(posts.count == CompoundHash.maxCutPaths + 1)
        #expect(CompoundHash.changedRanges(value, hashes: Self.wrong(posts), posts: posts) == nil)
        let within = Array(posts.dropLast())
        #expect(CompoundHash.changedRanges(value, hashes: Self.wrong(within), posts: within)?.count == CompoundHash.maxCutPaths + 1)
    }

    @Test func anAnswerPastTheWorkBudgetIsGivenUp() throws {
        let (value, posts) = Self.oneChild(300)
        let (spent, ranges) = Self.unbounded(value, posts)
        let expected = try #require(ranges)
        var enough = CompoundHash.Work(limit: spent)
        #expect(CompoundHash.changedRanges(value, hashes: Self.wrong(posts), posts: posts, work: &enough) == expected)
        var short = CompoundHash.Work(limit: spent - 1)
        #expect(CompoundHash.changedRanges(value, hashes: Self.wrong(posts), posts: posts, work: &short) == nil)
        // Given up early: the walk stops once the budget is spent, not at the end.
        var tiny = CompoundHash.Work(limit: 100)
        #expect(CompoundHash.changedRanges(value, hashes: Self.wrong(posts), posts: posts, work: &tiny) == nil)
        #expect(tiny.spent < 1_000)
        // The default budget answers a value of this size.
        #expect(spent < CompoundHash.workBudget)
    }

    /// Cuts out of walk order (an SDK's never are) would make ranges overlap, each holding
    /// most of the value: not used.
    @Test func cutsOutOfOrderAreNotUsed() {
        let (value, posts) = Self.oneChild(10)
        for bad in [Array(posts.reversed()), [posts[3], posts[3]], [posts[2], posts[5], posts[4]], ["/a/k000003", "/a"]] {
            #expect(CompoundHash.changedRanges(value, hashes: Self.wrong(bad), posts: bad) == nil, "\(bad)")
        }
        #expect(CompoundHash.changedRanges(value, hashes: Self.wrong(["/a", "/a/k000003"]), posts: ["/a", "/a/k000003"]) != nil)
    }

    /// The ranges as they were cut before (literals): priorities, arrays, integer keys,
    /// `.value` leaves, a range without leaves.
    @Test func theRangesAreTheSameAsBefore() throws {
        let value = try JSONParser.parse(Array(#"""
            {"a":{"k0":"v0","k1":"v1","k2":"v2"},"b":[10,20,{"c":true}],"9":{"x":1,".priority":"p","y":2},
             "10":{".value":"leaf",".priority":3},"z":{"q":null,"r":"s"}}
            """#.utf8))
        let posts = ["/9/x", "/9/y", "/10", "/a/k0", "/a/k1", "/b/1", "/b/2/c", "/b/2/d", "/z/r"]
        let ranges = try #require(CompoundHash.changedRanges(value, hashes: Self.wrong(posts), posts: posts))
        let expected: [JSONValue?] = [
            .object(["9": .object([".priority": "p", "x": 1])]),
            .object(["9": .object(["y": 2])]),
            .object(["10": .object([".value": "leaf", ".priority": 3])]),
            .object(["a": .object(["k0": "v0"])]),
            .object(["a": .object(["k1": "v1"])]),
            .object(["a": .object(["k2": "v2"]), "b": .object(["0": 10, "1": 20])]),
            .object(["b": .object(["2": .object(["c": true])])]),
            .null,
            .object(["z": .object(["r": "s"])]),
            .null,
        ]
        #expect(ranges.map(\.value) == expected.map { $0 ?? .null })
        #expect(ranges.map(\.start) == [nil] + posts)
        #expect(ranges.map(\.end) == posts + [nil])
    }

    /// Random values and SDK-like cuts (at leaves, in walk order): each range holds
    /// exactly the leaves after its start and up to its end, as a plain filter of the
    /// value's leaves by path gives them.
    @Test func theRangesHoldExactlyTheLeavesBetweenTheirCuts() throws {
        var random = SplitMix(seed: 0x5eed)
        for _ in 0..<200 {
            let value = Self.randomValue(&random, depth: 0)
            var leaves: [([String], JSONValue)] = []
            Self.leaves(of: value, at: [], into: &leaves)
            let posts = leaves.filter { !$0.0.isEmpty && random.next() % 3 == 0 }.map { "/" + $0.0.joined(separator: "/") }
            let ranges = try #require(CompoundHash.changedRanges(value, hashes: Self.wrong(posts), posts: posts), "\(value) \(posts)")
            for (index, range) in ranges.enumerated() {
                let lower = index == 0 ? nil : CompoundHash.pathKeys(posts[index - 1])
                let upper = index == posts.count ? nil : CompoundHash.pathKeys(posts[index])
                var filtered: JSONValue = .null
                for (path, leaf) in leaves where (lower.map { Self.compare(path, $0) > 0 } ?? true) && (upper.map { Self.compare(path, $0) <= 0 } ?? true) {
                    filtered = Self.setting(filtered, path[...], leaf)
                }
                #expect(range.value == filtered, "\(value) \(posts) range \(index)")
            }
        }
    }

    // MARK: The oracle: leaves by path, filtered

    /// Every leaf of `value` with its path, in walk order (`.priority` where the walk visits it).
    static func leaves(of value: JSONValue, at path: [String], into leaves: inout [([String], JSONValue)]) {
        if case .null = value { return }
        if CompoundHash.isLeafNode(value) { return leaves.append((path, value)) }
        var work = CompoundHash.Work(limit: .max)
        for child in CompoundHash.children(of: value, work: &work) {
            Self.leaves(of: child.value, at: path + [child.key.text], into: &leaves)
        }
    }

    /// Paths in walk order: key by key, a path before the paths below it.
    static func compare(_ a: [String], _ b: [String]) -> Int {
        for (x, y) in zip(a, b) {
            let order = CompoundHash.Key(x).compare(CompoundHash.Key(y))
            if order != 0 { return order }
        }
        return a.count == b.count ? 0 : (a.count < b.count ? -1 : 1)
    }

    static func setting(_ value: JSONValue, _ path: ArraySlice<String>, _ leaf: JSONValue) -> JSONValue {
        guard let key = path.first else { return leaf }
        var members: [JSONKey: JSONValue] = [:]
        if case .object(let existing) = value { members = existing }
        members[JSONKey(key)] = setting(members[JSONKey(key)] ?? .null, path.dropFirst(), leaf)
        return .object(members)
    }

    static let keys = ["a", "b", "-N1", "0", "1", "10", "2", "007", "zz", "é", ".priority"]

    static func randomValue(_ random: inout SplitMix, depth: Int) -> JSONValue {
        let pick = random.next() % 10
        if depth >= 3 || pick < 3 {
            switch random.next() % 4 {
            case 0: return .int(Int64(random.next() % 100))
            case 1: return .string("s\(random.next() % 10)")
            case 2: return .bool(random.next() % 2 == 0)
            default: return .double(Double(random.next() % 1000) / 8)
            }
        }
        if pick == 3 {
            return .array((0..<Int(random.next() % 4)).map { _ in randomValue(&random, depth: depth + 1) })
        }
        if pick == 4 {
            return .object([".value": randomValue(&random, depth: 3), ".priority": .int(Int64(random.next() % 5))])
        }
        var members: [JSONKey: JSONValue] = [:]
        for _ in 0..<(1 + Int(random.next() % 6)) {
            let key = keys[Int(random.next() % UInt64(keys.count))]
            members[JSONKey(key)] = key == ".priority" ? .string("p\(random.next() % 3)") : randomValue(&random, depth: depth + 1)
        }
        return .object(members)
    }
}

/// A seeded generator (SplitMix64): the same values on every run.
struct SplitMix {
    var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
