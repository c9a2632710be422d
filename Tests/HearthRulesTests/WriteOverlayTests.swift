import HearthJSON
@testable import HearthRules
import Testing

/// `newData`'s view of the tree (docs/protocol/rules.md §3.3).
@Suite struct WriteOverlayTests {
    static let base = JSONTreeSource(.parse(#"{"a": {"b": 1, "c": {"d": "x"}}, "leaf": 5, "big": {"k1": 1, "k2": 2, "k3": 3}}"#))

    static func overlay(_ writes: [(String, JSONValue?)]) -> WriteOverlay {
        WriteOverlay(base: base, writes: writes.map { (path: path($0.0), value: $0.1) })
    }

    /// A trie node's children (the first inline, the rest in an array) come back in the
    /// order they were added, each once.
    @Test func aNodesChildrenKeepTheirOrder() {
        var children = OverlayTrie.Children()
        #expect(children.isEmpty && children.count == 0 && Array(children).isEmpty)
        let nodes = (0..<4).map { _ in OverlayTrie.Node() }
        for (index, node) in nodes.enumerated() { children.append(("k\(index)", node)) }
        #expect(!children.isEmpty && children.count == 4)
        #expect(children.map(\.key) == ["k0", "k1", "k2", "k3"])
        #expect(zip(children, nodes).allSatisfy { $0.node === $1 })
    }

    @Test func untouchedPathsReadTheBase() throws {
        let view = Self.overlay([("a/b", .int(2))])
        #expect(try view.leaf(at: path("leaf")) == .int(5))
        #expect(try view.leaf(at: path("a/c/d")) == .string("x"))
        #expect(try Set(view.childKeys(at: path("a"))) == ["b", "c"])
    }

    @Test func replacementsAndMerges() throws {
        let view = Self.overlay([("a/b", .int(2)), ("a/new", .object(["z": true]))])
        #expect(try view.leaf(at: path("a/b")) == .int(2))
        #expect(try view.leaf(at: path("a/new/z")) == .bool(true))
        #expect(try Set(view.childKeys(at: path("a"))) == ["b", "c", "new"])
        #expect(try view.exists(at: path("a/new")))
        #expect(try view.leaf(at: path("a")) == nil)
    }

    @Test func deletesRemoveEmptiedParents() throws {
        let view = Self.overlay([("a/b", nil), ("a/c", nil)])
        #expect(try !view.exists(at: path("a")))
        #expect(try view.childKeys(at: path("a")) == [])
        #expect(try !view.exists(at: path("a/c/d")))
        let partial = Self.overlay([("big/k1", nil), ("big/k2", nil)])
        #expect(try partial.exists(at: path("big")))
        #expect(try partial.childKeys(at: path("big")) == ["k3"])
        let all = Self.overlay([("big/k1", nil), ("big/k2", nil), ("big/k3", nil)])
        #expect(try !all.exists(at: path("big")))
        #expect(try all.exists(at: .root))
    }

    @Test func emptyObjectsAndNullsAreDeletes() throws {
        let view = Self.overlay([("a", .object([JSONKey: JSONValue]())), ("leaf", .null)])
        #expect(try !view.exists(at: path("a")))
        #expect(try !view.exists(at: path("leaf")))
        let nested = Self.overlay([("a/c", .object(["d": .null, "e": .object([JSONKey: JSONValue]())]))])
        #expect(try !nested.exists(at: path("a/c")))
        #expect(try nested.childKeys(at: path("a")) == ["b"])
    }

    @Test func leavesAndChildren() throws {
        // Setting under a leaf replaces it; deleting under a leaf leaves it.
        let set = Self.overlay([("leaf/x", .int(1))])
        #expect(try set.leaf(at: path("leaf")) == nil)
        #expect(try set.childKeys(at: path("leaf")) == ["x"])
        let delete = Self.overlay([("leaf/x", nil)])
        #expect(try delete.leaf(at: path("leaf")) == .int(5))
        #expect(try delete.exists(at: path("leaf")))
    }

    @Test func laterWritesWin() throws {
        let view = Self.overlay([("a", .object(["q": 1])), ("a/r", .int(2)), ("a/q", nil)])
        #expect(try view.childKeys(at: path("a")) == ["r"])
        let replaced = Self.overlay([("a/b", .int(9)), ("a", .object(["only": 1]))])
        #expect(try replaced.childKeys(at: path("a")) == ["only"])
        #expect(try replaced.leaf(at: path("a/b")) == nil)
    }

    @Test func rootReplacement() throws {
        let view = Self.overlay([("", .object(["fresh": 1]))])
        #expect(try view.childKeys(at: .root) == ["fresh"])
        #expect(try !view.exists(at: path("a")))
        let gone = Self.overlay([("", nil)])
        #expect(try !gone.exists(at: .root))
    }

    /// Past `Children.indexedPast` a node's children are found through an index by key,
    /// compared as code units as the scan compares them: the same node for each key, the
    /// first child with a key, and canonically equivalent keys (é precomposed and not)
    /// as different children.
    @Test func manyChildrenAreFoundByKeyAsTheScanFindsThem() {
        var children = OverlayTrie.Children()
        let keys = ["\u{E9}", "e\u{301}"] + (0..<100).map { "k\($0)" }
        let nodes = keys.map { _ in OverlayTrie.Node() }
        for (count, (key, node)) in zip(keys, nodes).enumerated() {
            #expect(children.isIndexed == (count > OverlayTrie.Children.indexedPast))
            children.append((key, node))
            #expect(children.node(for: key) === node, "\(key) after \(count + 1) children")
        }
        #expect(children.isIndexed)
        #expect(zip(keys, nodes).allSatisfy { children.node(for: $0) === $1 })
        #expect(children.node(for: "\u{E9}") !== children.node(for: "e\u{301}"))
        #expect(children.node(for: "k100") == nil && children.node(for: "E\u{301}") == nil)
        #expect(children.map(\.key) == keys)
    }

    /// A multi-location update of many children beside many stored ones: the keys are the
    /// stored ones not deleted and the written ones, each once, canonically equivalent
    /// keys apart.
    @Test func theKeysUnderManyWrittenChildren() throws {
        var stored: [JSONKey: JSONValue] = ["\u{E9}": .int(1)]
        for index in 0..<40 { stored[JSONKey("k\(index)")] = .int(Int64(index)) }
        let base = JSONTreeSource(.object(["wide": .object(stored)]))
        var writes: [(path: DataPath, value: JSONValue?)] = (20..<60).map { (path("wide/k\($0)"), .int(-1)) }
        writes += (0..<5).map { (path("wide/k\($0)"), nil) }
        writes.append((path("wide/e\u{301}"), .int(2)))
        let view = WriteOverlay(base: base, writes: writes)
        let keys = try view.childKeys(at: path("wide"))
        #expect(keys.count == Set(keys.map { JSONKey($0) }).count)
        #expect(Set(keys.map { JSONKey($0) }) == Set((["\u{E9}", "e\u{301}"] + (5..<60).map { "k\($0)" }).map { JSONKey($0) }))
    }
}
