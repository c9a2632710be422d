import HearthJSON
import HearthStreams
import Testing

@Suite struct StreamEventTests {
    func path(_ text: String) -> DataPath { try! DataPath(string: text) }
    func json(_ text: String) -> JSONValue { try! JSONParser.parse(Array(text.utf8)) }
    func text(_ bytes: [UInt8]) -> String { String(decoding: bytes, as: UTF8.self) }

    @Test func putAtTheLocationAndBelowHasARelativePath() {
        let at = StreamChange(seq: 7, path: path("users/a"), kind: .put, data: json(#"{"n":1}"#))
        #expect(StreamEvent.of(at, at: path("users/a")) == StreamEvent(name: .put, path: "/", data: json(#"{"n":1}"#)))
        let below = StreamChange(seq: 8, path: path("users/a/favorites/x/note"), kind: .put, data: .string("hi"))
        #expect(StreamEvent.of(below, at: path("users/a")) == StreamEvent(name: .put, path: "/favorites/x/note", data: .string("hi")))
        #expect(StreamEvent.of(below, at: .root) == StreamEvent(name: .put, path: "/users/a/favorites/x/note", data: .string("hi")))
    }

    @Test func unrelatedPathsGetNothing() {
        let change = StreamChange(seq: 1, path: path("users/b/favorites/x"), kind: .put, data: .int(1))
        #expect(StreamEvent.of(change, at: path("users/a")) == nil)
        #expect(StreamEvent.of(change, at: path("users/b/favorites/y")) == nil)
    }

    @Test func aPutAboveSendsTheLocationsPartAsPutSlash() {
        let change = StreamChange(seq: 3, path: path("users"), kind: .put, data: json(#"{"a":{"favorites":{"x":{"n":1}}},"b":true}"#))
        #expect(StreamEvent.of(change, at: path("users/a/favorites")) == StreamEvent(name: .put, path: "/", data: json(#"{"x":{"n":1}}"#)))
        // A location the new value does not contain becomes null (deleted).
        #expect(StreamEvent.of(change, at: path("users/c")) == StreamEvent(name: .put, path: "/", data: .null))
        // Unless the writer saw it unchanged.
        var same = change
        same.unchangedBelow = [path("users/c")]
        #expect(StreamEvent.of(same, at: path("users/c")) == nil)
    }

    @Test func aMultiPathPatchAboveIsSplitPerLocation() {
        let change = StreamChange(seq: 4, path: path("users"), kind: .patch,
                                  data: json(#"{"a/favorites/x/note":"n","a/favorites/y":null,"b":{"z":1}}"#))
        #expect(StreamEvent.of(change, at: path("users/a/favorites")) ==
                StreamEvent(name: .patch, path: "/", data: json(#"{"x/note":"n","y":null}"#)))
        #expect(StreamEvent.of(change, at: path("users/b/z")) == StreamEvent(name: .put, path: "/", data: .int(1)))
        #expect(StreamEvent.of(change, at: path("users/c")) == nil)
        #expect(StreamEvent.of(change, at: path("users")) ==
                StreamEvent(name: .patch, path: "/", data: json(#"{"a/favorites/x/note":"n","a/favorites/y":null,"b":{"z":1}}"#)))
        #expect(StreamEvent.of(change, at: .root) ==
                StreamEvent(name: .patch, path: "/users", data: json(#"{"a/favorites/x/note":"n","a/favorites/y":null,"b":{"z":1}}"#)))
    }

    @Test func arraysAreRenderedBack() {
        let change = StreamChange(seq: 5, path: path("list"), kind: .put, data: json(#"{"0":"a","1":"b"}"#))
        #expect(StreamEvent.of(change, at: path("list")) == StreamEvent(name: .put, path: "/", data: json(#"["a","b"]"#)))
    }

    @Test func exactBytesOfEveryEventKind() {
        #expect(text(StreamFrames.event(StreamEvent(name: .put, path: "/", data: json(#"{"b":1,"a":"x"}"#)), id: 42))
                == "event: put\nid: 42\ndata: {\"path\":\"/\",\"data\":{\"a\":\"x\",\"b\":1}}\n\n")
        #expect(text(StreamFrames.event(StreamEvent(name: .patch, path: "/x", data: json(#"{"note":null}"#)), id: 43))
                == "event: patch\nid: 43\ndata: {\"path\":\"/x\",\"data\":{\"note\":null}}\n\n")
        #expect(text(StreamFrames.event(StreamEvent(name: .put, path: "/q\"uote", data: .null), id: 1))
                == "event: put\nid: 1\ndata: {\"path\":\"/q\\\"uote\",\"data\":null}\n\n")
        #expect(text(StreamFrames.keepAlive) == "event: keep-alive\ndata: null\n\n")
        #expect(text(StreamFrames.cancel) == "event: cancel\ndata: null\n\n")
        #expect(text(StreamFrames.authRevoked) == "event: auth_revoked\ndata: credential is no longer valid\n\n")
    }

    @Test func aKeyWithANewlineCannotBreakTheFrame() {
        // Keys cannot hold control characters, but string values can: JSON escapes them.
        let bytes = StreamFrames.event(StreamEvent(name: .put, path: "/", data: .string("a\nevent: cancel\n\n")), id: 1)
        #expect(text(bytes).split(separator: "\n", omittingEmptySubsequences: false).count == 5)
    }
}
