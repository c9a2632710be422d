import HearthJSON
import HearthStore
import Testing

/// Which children of a location a logged change may have changed (the PostgreSQL index
/// build's catch-up).
@Suite struct ChangeChildrenTests {
    func path(_ text: String) -> DataPath { try! DataPath(string: text) }
    func put(_ at: String) -> Change { Change(seq: 1, path: path(at), kind: .put, data: 1, at: 0) }
    func patch(_ at: String, _ entries: [String]) -> Change {
        Change(seq: 1, path: path(at), kind: .patch, data: .object(Dictionary(uniqueKeysWithValues: entries.map { (JSONKey($0), JSONValue.int(1)) })), at: 0)
    }

    @Test func putsBelowAtAboveAndElsewhere() {
        let items = path("items")
        #expect(put("items/k1").touchedChildren(of: items) == [JSONKey("k1")])
        #expect(put("items/k1/score/deep").touchedChildren(of: items) == [JSONKey("k1")])
        #expect(put("items").touchedChildren(of: items) == nil)
        #expect(put("/").touchedChildren(of: items) == nil)
        #expect(put("itemsx/k1").touchedChildren(of: items) == [])
        #expect(put("other").touchedChildren(of: items) == [])
        #expect(put("a").touchedChildren(of: DataPath.root) == [JSONKey("a")])
    }

    @Test func patchesAreTheirEntries() {
        let items = path("a/items")
        #expect(patch("a", ["items/k1/score", "items/k2", "other/x"]).touchedChildren(of: items) == [JSONKey("k1"), JSONKey("k2")])
        #expect(patch("a/items", ["k1", "k1/score"]).touchedChildren(of: items) == [JSONKey("k1")])
        #expect(patch("a", ["items/k1", "items"]).touchedChildren(of: items) == nil, "an entry at the location")
        #expect(patch("a/items/k1", ["score", "name"]).touchedChildren(of: items) == [JSONKey("k1")])
        #expect(patch("b", ["items/k1"]).touchedChildren(of: items) == [])
    }

    @Test func canonicallyEqualKeysAreTwo() {
        let touched = patch("items", ["\u{E9}", "e\u{301}"]).touchedChildren(of: path("items"))
        #expect(touched?.count == 2)
        // A location spelled one way is not the other.
        #expect(put("e\u{301}/k1").touchedChildren(of: path("\u{E9}")) == [])
    }
}
