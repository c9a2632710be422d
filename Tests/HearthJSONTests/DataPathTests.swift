import Testing
@testable import HearthJSON

@Suite("DataPath")
struct DataPathTests {
    @Test(arguments: [
        ("/.json", [String]()),
        ("/", []),
        ("", []),
        (".json", []),
        ("/users.json", ["users"]),
        ("/users/alice.json", ["users", "alice"]),
        ("/users/alice", ["users", "alice"]),
        ("//users///alice/.json", ["users", "alice"]),
        ("/users/alice/", ["users", "alice"]),
        ("/a%20b/c%2Bd+e.json", ["a b", "c+d+e"]),
        ("/%C3%A9t%c3%a9/%F0%9F%98%80", ["été", "😀"]),
        ("/caf%C3%A9.json", ["café"]),
    ])
    func parsesURLPaths(_ raw: String, _ expected: [String]) throws {
        #expect(try DataPath(urlPath: raw).segments == expected)
    }

    @Test func jsonSuffixIsStrippedOnceAndOnlyAtTheEnd() throws {
        // "/a.json/b.json" -> the first ".json" is part of a key, and "." is forbidden.
        #expect(throws: PathError.self) { try DataPath(urlPath: "/a.json/b.json") }
        // "/a.json.json" -> "a.json" after one strip: invalid key.
        #expect(throws: PathError.self) { try DataPath(urlPath: "/a.json.json") }
        #expect(try DataPath(urlPath: "/json").segments == ["json"])
        #expect(try DataPath(urlPath: "/ajson").segments == ["ajson"])
    }

    @Test(arguments: ["%", "%4", "%G0", "%4g", "a%", "%%", "%C3", "%C3%28", "%ED%A0%80", "%FF", "%C0%80"])
    func rejectsBadEncoding(_ segment: String) {
        #expect(throws: PathError.badEncoding(segment: segment)) { try DataPath(urlPath: "/ok/" + segment + ".json") }
    }

    @Test(arguments: [".", "$", "#", "[", "]", "%2F", "%2f", "%2E", "%00", "%01", "%1F", "%7F", "%0A", "%24"])
    func rejectsForbiddenCharactersInURLPaths(_ encoded: String) {
        #expect {
            try DataPath(urlPath: "/users/a" + encoded + "b.json")
        } throws: { error in
            guard case PathError.invalidKey(_, .forbiddenCharacter) = error else { return false }
            return true
        }
    }

    @Test(arguments: Array(0x00...0x1F) + [0x7F, 0x2E, 0x24, 0x23, 0x5B, 0x5D, 0x2F])
    func everyForbiddenCharacter(_ byte: Int) {
        let scalar = Unicode.Scalar(UInt8(byte))
        let key = "a" + String(Character(scalar)) + "b"
        #expect(throws: PathError.invalidKey(key: key, problem: .forbiddenCharacter(scalar))) {
            try DataPath.validateKey(key)
        }
        #expect(!DataPath.isValidKey(key))
        #expect(throws: PathError.self) { try DataPath(segments: ["ok", key]) }
    }

    @Test(arguments: ["a", "A-_z09", " ", "%", "+", "é", "😀", "-1", "a b", "\u{80}", "\u{2028}", "~!@%^&*()=`'\"{}|\\;:,<>?"])
    func acceptsOrdinaryKeys(_ key: String) throws {
        try DataPath.validateKey(key)
        #expect(try DataPath(segments: [key]).segments == [key])
    }

    @Test func keyLengthLimit() throws {
        let ok = String(repeating: "a", count: DataPath.maxKeyBytes)
        let tooLong = ok + "a"
        try DataPath.validateKey(ok)
        #expect(throws: PathError.invalidKey(key: tooLong, problem: .tooLong(bytes: 769))) {
            try DataPath.validateKey(tooLong)
        }
        // Bytes, not characters: 384 two-byte characters fit, 385 do not.
        try DataPath.validateKey(String(repeating: "é", count: 384))
        #expect(throws: PathError.self) { try DataPath.validateKey(String(repeating: "é", count: 385)) }
        #expect(throws: PathError.self) { try DataPath(urlPath: "/" + tooLong + ".json") }
        #expect(throws: PathError.invalidKey(key: "", problem: .empty)) { try DataPath.validateKey("") }
    }

    @Test func depthLimit() throws {
        #expect(DataPath.maxDepth == 32)
        #expect(DataPath.maxSegments == 31)
        let ok = Array(repeating: "k", count: 31)
        let tooDeep = Array(repeating: "k", count: 32)
        #expect(try DataPath(segments: ok).count == 31)
        #expect(try DataPath(urlPath: "/" + ok.joined(separator: "/") + ".json").count == 31)
        #expect(try DataPath(string: ok.joined(separator: "/")).count == 31)
        #expect(throws: PathError.tooDeep(depth: 32)) { try DataPath(segments: tooDeep) }
        #expect(throws: PathError.tooDeep(depth: 32)) { try DataPath(urlPath: "/" + tooDeep.joined(separator: "/") + ".json") }
        #expect(throws: PathError.tooDeep(depth: 32)) { try DataPath(string: tooDeep.joined(separator: "/")) }
        let deepest = try DataPath(segments: ok)
        #expect(throws: PathError.tooDeep(depth: 32)) { try deepest.child("x") }
        #expect(throws: PathError.tooDeep(depth: 33)) { try deepest.appending(DataPath(segments: ["a", "b"])) }
    }

    @Test func navigation() throws {
        let p = try DataPath(string: "a/b/c")
        #expect(p.segments == ["a", "b", "c"])
        #expect(p.key == "c")
        #expect(p.parent == (try DataPath(string: "a/b")))
        #expect(DataPath.root.parent == nil)
        #expect(DataPath.root.key == nil)
        #expect(try DataPath(string: "a").parent == .root)
        #expect(try p.child("d").segments == ["a", "b", "c", "d"])
        #expect(throws: PathError.self) { try p.child("d.e") }
        #expect(throws: PathError.self) { try p.child("") }
        #expect(try p.appending(DataPath(string: "x/y")).storageKey == "a/b/c/x/y")
        #expect(try DataPath.root.appending(p) == p)
        #expect(try DataPath(string: "/a//b/") == (try DataPath(string: "a/b")))
    }

    @Test func ancestry() throws {
        let a = try path("a"), ab = try path("a/b"), abc = try path("a/b/c"), ac = try path("a/c"), abx = try path("ab")
        #expect(a.isAncestor(of: ab))
        #expect(a.isAncestor(of: abc))
        #expect(!a.isAncestor(of: a))
        #expect(a.isPrefix(of: a))
        #expect(!ab.isAncestor(of: ac))
        #expect(!a.isAncestor(of: abx))  // segment-wise, not string prefix
        #expect(DataPath.root.isAncestor(of: a))
        #expect(!DataPath.root.isAncestor(of: .root))
        #expect(DataPath.root.isPrefix(of: .root))
        #expect(!abc.isAncestor(of: a))
        #expect(a.relativePath(to: abc) == (try path("b/c")))
        #expect(ab.relativePath(to: ac) == nil)
    }

    @Test func textForms() throws {
        let p = try DataPath(urlPath: "/users/al%20ice.json")
        #expect(p.description == "/users/al ice")
        #expect(p.storageKey == "users/al ice")
        #expect(DataPath.root.description == "/")
        #expect(DataPath.root.storageKey == "")
    }

    @Test func ordering() throws {
        let paths = try ["b", "a/b", "a", "10", "9", "a/10", "a/9"].map(path)
        #expect(paths.sorted().map(\.storageKey) == ["9", "10", "a", "a/9", "a/10", "a/b", "b"])
    }

    @Test func messagesAreBoundedAndClean() {
        let huge = String(repeating: "x", count: 5000) + "."
        let error = PathError.invalidKey(key: huge, problem: .forbiddenCharacter("."))
        #expect(error.description.hasPrefix("Invalid path: "))
        #expect(error.description.count < 300)
        #expect(!error.description.contains(String(repeating: "x", count: 101)))
        let control = PathError.invalidKey(key: "a\nb\u{0}", problem: .forbiddenCharacter("\n"))
        #expect(!control.description.contains("\n"))
        #expect(control.description.contains("U+000A"))
        let encoding = PathError.badEncoding(segment: String(repeating: "%", count: 1000))
        #expect(encoding.description.count < 300)
        #expect(PathError.tooDeep(depth: 40).description.contains("32"))
    }
}

@Suite struct PercentEncodingTests {
    @Test func decodesEscapesAndPlus() {
        #expect(PercentEncoding.decode("a%20b%2Fc".utf8) == "a b/c")
        #expect(PercentEncoding.decode("a+b".utf8) == "a+b")
        #expect(PercentEncoding.decode("a+b".utf8, plusIsSpace: true) == "a b")
        #expect(PercentEncoding.decode("%E2%9C%93".utf8) == "✓")
    }

    @Test(arguments: ["%", "%4", "%zz", "%FF", "%C3"])
    func rejectsMalformedEscapesAndBadUTF8(input: String) {
        #expect(PercentEncoding.decode(input.utf8) == nil)
    }

    /// Raw bytes without escapes: well-formed UTF-8 comes back as it is, anything else
    /// (a lone continuation byte, a truncated sequence, an overlong form, a surrogate, a
    /// byte UTF-8 never uses) is refused, also when it would decode to U+FFFD.
    @Test func rawBytesAreCheckedAsUTF8() {
        #expect(PercentEncoding.decode([UInt8]("plain-ascii".utf8)) == "plain-ascii")
        #expect(PercentEncoding.decode([UInt8]("été😀✓\u{FFFD}".utf8)) == "été😀✓\u{FFFD}")
        for bad: [UInt8] in [[0x80], [0xC3], [0xE2, 0x9C], [0xC0, 0x80], [0xED, 0xA0, 0x80], [0xFF], [0x61, 0xF8, 0x62]] {
            #expect(PercentEncoding.decode(bad) == nil)
        }
    }
}
