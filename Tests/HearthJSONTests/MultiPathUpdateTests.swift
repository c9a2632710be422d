import Testing
@testable import HearthJSON

@Suite("MultiPathUpdate")
struct MultiPathUpdateTests {
    private func writes(_ body: JSONValue, base: String = "") throws(UpdateError) -> [String: JSONValue?] {
        let base = try! DataPath(string: base)
        var out: [String: JSONValue?] = [:]
        for write in try MultiPathUpdate.parse(base: base, body: body) {
            out[write.path.storageKey] = write.value
        }
        return out
    }

    @Test func multiPathWritesAndDeletes() throws {
        let result = try writes(["users/bob/name": "Bob", "users/alice/city": .null, "count": 2.0])
        #expect(result.count == 3)
        #expect(result["users/bob/name"] == .some("Bob"))
        #expect(result["users/alice/city"] == .some(nil))
        #expect(result["count"] == .some(.int(2)))
    }

    @Test func keysAreRelativeToTheBase() throws {
        let result = try writes(["name": "x", "a/b": [1]], base: "users/u1")
        #expect(result["users/u1/name"] == .some("x"))
        #expect(result["users/u1/a/b"] == .some(["0": 1]))
    }

    @Test func valuesAreNormalised() throws {
        let result = try writes(["a": ["x": .null], "b": [:], "c": ["d": [:], "e": 1]])
        #expect(result["a"] == .some(nil))
        #expect(result["b"] == .some(nil))
        #expect(result["c"] == .some(["e": 1]))
    }

    @Test func emptyObjectIsANoOp() throws {
        #expect(try MultiPathUpdate.parse(base: .root, body: [:]).isEmpty)
    }

    @Test func resultIsInPathOrder() throws {
        let result = try MultiPathUpdate.parse(base: .root, body: ["b": 1, "a/z": 2, "a/10": 3, "a/9": 4])
        #expect(result.map(\.path.storageKey) == ["a/9", "a/10", "a/z", "b"])
    }

    @Test(arguments: [JSONValue.null, 1, "x", [1, 2], true])
    func bodyMustBeAnObject(_ body: JSONValue) {
        #expect(throws: UpdateError.notAnObject) { try MultiPathUpdate.parse(base: .root, body: body) }
    }

    @Test(arguments: [
        ["a": 1, "a/b": 2] as JSONValue,
        ["a/b": 1, "a/b/c/d": 2],
        ["x": 1, "a/b": 1, "a//b": 2],  // same path after ignoring the empty segment
        ["a/b": 1, "/a/b/": 2],
    ])
    func overlappingPathsAreRejected(_ body: JSONValue) {
        #expect {
            try MultiPathUpdate.parse(base: .root, body: body)
        } throws: { error in
            guard case UpdateError.overlappingPaths(let a, let b) = error else { return false }
            return a.isPrefix(of: b)
        }
    }

    @Test func siblingsAndPrefixLookalikesAreFine() throws {
        let result = try writes(["a/b": 1, "a/c": 2, "ab": 3, "a/bc": 4])
        #expect(result.count == 4)
    }

    @Test func emptySegmentsAreIgnored() throws {
        let result = try writes(["/a//b/": 1])
        #expect(result["a/b"] == .some(1))
    }

    @Test(arguments: ["", "/", "//"])
    func keysNamingNoChildAreRejected(_ key: String) {
        #expect(throws: UpdateError.emptyPath(key: key)) { try MultiPathUpdate.parse(base: .root, body: [key: 1]) }
    }

    @Test(arguments: ["a.b", "a/$x", "a/b#", "[x]", "a/\u{1}"])
    func invalidKeysAreRejected(_ key: String) {
        #expect {
            try MultiPathUpdate.parse(base: .root, body: [key: 1])
        } throws: { error in
            guard case UpdateError.invalidPath(let k, .invalidKey) = error else { return false }
            return k == key
        }
    }

    @Test func depthCountsTheBase() throws {
        let base = try DataPath(segments: Array(repeating: "p", count: 30))
        _ = try MultiPathUpdate.parse(base: base, body: ["a": 1])
        #expect {
            try MultiPathUpdate.parse(base: base, body: ["a/b": 1])
        } throws: { error in
            guard case UpdateError.invalidPath(_, .tooDeep(32)) = error else { return false }
            return true
        }
        #expect {
            try MultiPathUpdate.parse(base: base, body: ["a": ["b": 1]])
        } throws: { error in
            guard case UpdateError.invalidValue(_, .tooDeep) = error else { return false }
            return true
        }
    }

    @Test func messages() throws {
        let conflict = UpdateError.overlappingPaths(try path("a"), try path("a/b"))
        #expect(conflict.description.contains("/a is an ancestor of /a/b"))
        #expect(UpdateError.notAnObject.description.hasPrefix("Invalid data"))
    }
}
