import HearthJSON
import Testing
@testable import HearthWire

@Suite("Wire: query objects")
struct WireQueryTests {
    static func query(_ text: String) throws -> WireQuery {
        try WireQuery(try JSONParser.parse(text))
    }

    @Test func aPlainLocationIsAnEmptyObject() throws {
        let plain = try Self.query("{}")
        #expect(plain == WireQuery())
        #expect(!plain.filters)
    }

    @Test func theCapturedLimitToLastQuery() throws {
        // Captured for query(favs, orderByChild('order'), limitToLast(2))
        // (docs/protocol/wire.md §4.1).
        let query = try Self.query(#"{"l":2,"vf":"r","i":"order"}"#)
        #expect(query == WireQuery(index: .child("order"), limit: .last(2)))
        #expect(query.filters)
    }

    @Test func boundsWithNamesAndInclusiveness() throws {
        let startAfter = try Self.query(#"{"i":"createdAt","sp":10,"sn":"[MAX_NAME]","sin":false}"#)
        #expect(startAfter.start == WireQuery.Bound(value: .int(10), name: .max, inclusive: false))
        let endBefore = try Self.query(#"{"i":".key","ep":"m","ein":false}"#)
        #expect(endBefore.index == .key)
        #expect(endBefore.end == WireQuery.Bound(value: "m", name: .max, inclusive: false))
        let equal = try Self.query(#"{"i":".value","sp":null,"sn":"k","ep":null,"en":"k"}"#)
        // iOS sends no sin/ein: inclusive.
        #expect(equal.start == WireQuery.Bound(value: .null, name: .key("k"), inclusive: true))
        #expect(equal.end == WireQuery.Bound(value: .null, name: .key("k"), inclusive: true))
        #expect(try Self.query(#"{"sp":1}"#).start?.name == .min)
        #expect(try Self.query(#"{"ep":1}"#).end?.name == .max)
        #expect(try Self.query(#"{"l":3,"vf":"l"}"#).limit == .first(3))
    }

    @Test(arguments: [
        "[]", #"{"i":5}"#, #"{"i":""}"#, #"{"sp":{}}"#, #"{"sn":"a"}"#, #"{"sp":1,"sn":2}"#, #"{"sp":1,"sin":"yes"}"#,
        #"{"l":0,"vf":"l"}"#, #"{"l":-1,"vf":"r"}"#, #"{"l":"2","vf":"r"}"#, #"{"l":2,"vf":"x"}"#, #"{"l":3000000000,"vf":"l"}"#,
    ])
    func malformedQueriesAreRefused(text: String) {
        #expect(throws: WireError.malformedMessage) { try Self.query(text) }
    }
}
