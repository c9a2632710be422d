import HearthJSON
import HearthStore
import Testing

/// Query semantics in memory (docs/protocol/rest.md §1.3).
@Suite struct TreeQueryTests {
    func json(_ text: String) -> JSONValue { try! JSONParser.parse(Array(text.utf8)) }
    func path(_ text: String) -> DataPath { try! DataPath(string: text) }
    func keys(_ value: JSONValue, _ query: TreeQuery) -> [String] {
        // The result is unordered; sort it as a client would, by the query's own order.
        TreeQuery(orderBy: query.orderBy).orderedKeys(of: query.apply(to: value))
    }

    let mixed = JSONValue.object([
        "n": .null, "f": .bool(false), "t": .bool(true), "one": .int(1), "half": .double(0.5), "big": .int(100),
        "a": .string("a"), "B": .string("B"), "obj": .object(["x": .int(1)]), "obj2": .object(["y": .int(2)]),
    ])

    @Test func valuesOrderByTypeThenValueThenKey() {
        #expect(keys(mixed, TreeQuery(orderBy: .value)) == ["n", "f", "t", "half", "one", "big", "B", "a", "obj", "obj2"])
    }

    @Test func keysOrderIntegersFirstNumerically() {
        let value = json(#"{"b":1,"10":1,"9":1,"-1":1,"a":1,"01":1,"1":1,"2147483648":1}"#)
        #expect(keys(value, TreeQuery(orderBy: .key)) == ["-1", "1", "01", "9", "10", "2147483648", "a", "b"])
    }

    @Test func childOrderTreatsMissingAsNullAndNestedPathsWork() {
        let value = json(#"{"p1":{"a":{"h":3}},"p2":{"a":{"h":1}},"p3":{"other":1},"p4":{"a":{"h":"tall"}},"p5":{"a":{"h":2}}}"#)
        #expect(keys(value, TreeQuery(orderBy: .child(path("a/h")))) == ["p3", "p2", "p5", "p1", "p4"])
    }

    @Test func boundsAreInclusiveOrExclusiveAndApplyBeforeTheLimit() {
        let value = json(#"{"a":1,"b":2,"c":3,"d":4,"e":5}"#)
        let byValue = TreeQuery(orderBy: .value)
        var q = byValue
        q.start = .init(.int(2), inclusive: true)
        q.end = .init(.int(4), inclusive: true)
        #expect(keys(value, q) == ["b", "c", "d"])
        q.start = .init(.int(2), inclusive: false)
        q.end = .init(.int(4), inclusive: false)
        #expect(keys(value, q) == ["c"])
        q = byValue
        q.start = .init(.int(2), inclusive: true)
        q.limit = .first(2)
        #expect(keys(value, q) == ["b", "c"])
        q.limit = .last(2)
        #expect(keys(value, q) == ["d", "e"])
        // equalTo is start = end.
        q = byValue
        q.start = .init(.int(3), inclusive: true)
        q.end = .init(.int(3), inclusive: true)
        #expect(keys(value, q) == ["c"])
        // A bound of another type: numbers all sort before strings.
        q = byValue
        q.start = .init(.string(""), inclusive: true)
        #expect(q.apply(to: value) == .null)
    }

    /// startAt(value, key) / endAt(value, key): children exactly at the value are cut by
    /// key, in key order (integer-like keys first); exclusive bounds drop the key itself.
    @Test func aBoundsKeyBreaksTiesAtItsValue() {
        let value = json(#"{"a":{"s":1},"b":{"s":2},"c":{"s":2},"10":{"s":2},"9":{"s":2},"d":{"s":2},"e":{"s":3}}"#)
        let order = TreeQuery.OrderBy.child(path("s"))
        // At s = 2 the key order is 9, 10, b, c, d.
        #expect(keys(value, TreeQuery(orderBy: order, start: .init(.int(2), inclusive: true, key: "c"))) == ["c", "d", "e"])
        #expect(keys(value, TreeQuery(orderBy: order, start: .init(.int(2), inclusive: false, key: "c"))) == ["d", "e"])
        #expect(keys(value, TreeQuery(orderBy: order, start: .init(.int(2), inclusive: true, key: "10"))) == ["10", "b", "c", "d", "e"])
        #expect(keys(value, TreeQuery(orderBy: order, end: .init(.int(2), inclusive: true, key: "b"))) == ["a", "9", "10", "b"])
        #expect(keys(value, TreeQuery(orderBy: order, end: .init(.int(2), inclusive: false, key: "9"))) == ["a"])
        // A key past every tie keeps none of them; the limit applies after the bounds.
        #expect(keys(value, TreeQuery(orderBy: order, start: .init(.int(2), inclusive: true, key: "z"))) == ["e"])
        #expect(keys(value, TreeQuery(orderBy: order, start: .init(.int(2), inclusive: true, key: "b"), limit: .first(2))) == ["b", "c"])
    }

    @Test func keyBoundsCompareKeys() {
        let value = json(#"{"a":1,"b":1,"c":1,"1":1}"#)
        var q = TreeQuery(orderBy: .key)
        q.start = .init(.string("b"), inclusive: true)
        #expect(keys(value, q) == ["b", "c"])
        q.start = .init(.string("1"), inclusive: false)
        q.limit = .first(1)
        #expect(keys(value, q) == ["a"])
    }

    @Test func aLeafOrMissingNodeIsReturnedAsItIs() {
        #expect(TreeQuery(orderBy: .key, limit: .first(1)).apply(to: .int(5)) == .int(5))
        #expect(TreeQuery(orderBy: .key, limit: .first(1)).apply(to: .null) == .null)
    }

    @Test func stringsCompareByUTF16CodeUnits() {
        #expect(QueryOrder.compare(.string("\u{FFFF}"), .string("😀")) > 0)
        #expect(QueryOrder.compare(.string("a"), .string("b")) < 0)
        #expect(QueryOrder.compare(.int(1), .double(1.0)) == 0)
        #expect(QueryOrder.compare(.int(Int64.max), .int(Int64.max - 1)) > 0)
    }
}
