import Testing
@testable import HearthJSON

@Suite("FirebaseTree")
struct FirebaseTreeTests {
    private func normalize(_ value: JSONValue, at p: DataPath = .root) throws(TreeError) -> JSONValue? {
        try FirebaseTree.normalize(value, at: p)
    }

    // MARK: Deletes and empties

    @Test(arguments: [
        JSONValue.null, [:], [], ["a": .null], ["a": [:], "b": []], ["a": ["b": ["c": .null]]],
        [.null, .null], [[:], ["x": .null]],
    ])
    func vanishes(_ value: JSONValue) throws {
        #expect(try normalize(value) == nil)
    }

    @Test func nestedEmptiesVanishButSiblingsStay() throws {
        let value: JSONValue = ["keep": 1, "gone": ["x": .null, "y": [:]], "deep": ["a": ["b": [:]], "c": "d"]]
        #expect(try normalize(value) == ["keep": 1, "deep": ["c": "d"]])
    }

    @Test func leavesStay() throws {
        for leaf: JSONValue in [true, false, 0, -7, 1.5, "", "text", .int(.max)] {
            #expect(try normalize(leaf) == leaf)
        }
    }

    // MARK: Arrays

    @Test func arraysBecomeIndexKeyedObjects() throws {
        #expect(try normalize([1, 2, 3]) == ["0": 1, "1": 2, "2": 3])
        #expect(try normalize(["a", .null, "c"]) == ["0": "a", "2": "c"])
        #expect(try normalize([.null, [:], "x"]) == ["2": "x"])
        #expect(try normalize(["list": [[1], [.null]]]) == ["list": ["0": ["0": 1]]])
    }

    @Test func renderTurnsDenseIntegerKeyedObjectsIntoArrays() {
        #expect(FirebaseTree.render(["0": 1, "1": 2, "2": 3]) == [1, 2, 3])
        #expect(FirebaseTree.render(["0": "a", "2": "c"]) == ["a", .null, "c"])  // max 2 < 2×2
        #expect(FirebaseTree.render(["1": "x"]) == [.null, "x"])  // max 1 < 2×1
        #expect(FirebaseTree.render(["2": "x"]) == ["2": "x"])  // max 2 ≥ 2×1
        #expect(FirebaseTree.render(["0": 1, "3": 2]) == [1, .null, .null, 2])  // max 3 < 2×2
        #expect(FirebaseTree.render(["0": 1, "4": 2]) == ["0": 1, "4": 2])  // max 4 ≥ 2×2
        #expect(FirebaseTree.render(["0": 1, "2": 2, "4": 3]) == [1, .null, 2, .null, 3])  // 4 < 6
        #expect(FirebaseTree.render(["0": 1, "5": 2, "4": 3]) == [1, .null, .null, .null, 3, 2])  // 5 < 6
        #expect(FirebaseTree.render(["0": 1, "6": 2, "4": 3]) == ["0": 1, "4": 3, "6": 2])  // 6 ≥ 6
        #expect(FirebaseTree.render(["0": 1, "01": 2]) == ["0": 1, "01": 2])  // "01" not canonical
        #expect(FirebaseTree.render(["0": 1, "-1": 2]) == ["0": 1, "-1": 2])
        #expect(FirebaseTree.render(["0": 1, "a": 2]) == ["0": 1, "a": 2])
        #expect(FirebaseTree.render(["99999999999999999999": 1]) == ["99999999999999999999": 1])
        #expect(FirebaseTree.render(["x": ["0": ["0": true]]]) == ["x": [[true]]])
        #expect(FirebaseTree.render([:]) == [:])
        #expect(FirebaseTree.render("leaf") == "leaf")
    }

    @Test func sparseArraysRoundTripOrNotByTheTwiceRule() throws {
        let dense: JSONValue = ["a", .null, "c", .null, "e"]  // keys 0,2,4: 4 < 6
        #expect(FirebaseTree.render(try normalize(dense)!) == dense)
        let sparse: JSONValue = ["a", .null, .null, .null, "e"]  // keys 0,4: 4 ≥ 4
        #expect(FirebaseTree.render(try normalize(sparse)!) == ["0": "a", "4": "e"])
        let trailingNull: JSONValue = [1, 2, .null]
        #expect(FirebaseTree.render(try normalize(trailingNull)!) == [1, 2])
    }

    // MARK: Numbers

    @Test func integralDoublesBecomeIntegers() throws {
        #expect(try normalize(5.0) == .int(5))
        #expect(try normalize(-0.0) == .int(0))
        #expect(try normalize(.double(9_007_199_254_740_992)) == .int(9_007_199_254_740_992))
        #expect(try normalize(.double(18_014_398_509_481_984)) == .double(18_014_398_509_481_984))
        #expect(try normalize(1.5) == .double(1.5))
        #expect(try normalize(["n": 2.0]) == ["n": 2])
    }

    @Test func nonFiniteNumbersAreRejected() throws {
        let p = try path("a")
        #expect(throws: TreeError.invalidNumber(at: try path("a/x"))) { try normalize(["x": .double(.nan)], at: p) }
        #expect(throws: TreeError.self) { try normalize(.double(.infinity)) }
    }

    // MARK: Keys

    @Test(arguments: ["a.b", "a$", "#", "[x", "x]", "a/b", "a\u{0}", "a\u{7F}", ""])
    func invalidKeysInDataAreRejected(_ key: String) throws {
        let p = try path("users/u1")
        #expect {
            try normalize(["ok": ["nested": [key: 1]]], at: p)
        } throws: { error in
            guard case TreeError.invalidKey(let k, _, let under) = error else { return false }
            return k == key && under == (try? path("users/u1/ok/nested"))
        }
        // Even when the value would vanish (js-sdk validates before normalising).
        #expect(throws: TreeError.self) { try normalize([key: .null]) }
    }

    @Test func prioritiesAreKeptForTheWriter() throws {
        #expect(try normalize(["a": 1, ".priority": "p"]) == .object(["a": 1, ".priority": "p"]))
        #expect(try normalize([".value": 5, ".priority": 2.0]) == .object([".value": 5, ".priority": 2]))
        #expect(try normalize([".value": 5]) == .int(5))
        #expect(try normalize([".value": 5, ".priority": .null]) == .int(5))
        #expect(try normalize([".priority": 1]) == nil)  // a priority alone does not make a node
        #expect(throws: TreeError.self) { try normalize([".value": 5, "x": 1]) }
        #expect(throws: TreeError.self) { try normalize(["a": 1, ".priority": true]) }
        #expect(throws: TreeError.self) { try normalize([".value": ["x": 1], ".priority": 1]) }
        #expect(throws: TreeError.self) { try normalize(["a": 1, ".priority": .string(String(repeating: "p", count: 769))]) }
        // Readers see values without priorities.
        let stored: JSONValue = .object(["a": .object([".value": 1, ".priority": 3]), "b": .object(["c": 2, ".priority": "x"])])
        #expect(FirebaseTree.render(stored) == .object(["a": 1, "b": .object(["c": 2])]))
        #expect(FirebaseTree.withoutPriorities(stored) == .object(["a": 1, "b": .object(["c": 2])]))
        // Deep down it is still found; with none (arrays are left as they are), the value
        // comes back as it was.
        let deep: JSONValue = .object(["x": .object(["y": .object(["z": 1, ".priority": 2])])])
        #expect(FirebaseTree.withoutPriorities(deep) == .object(["x": .object(["y": .object(["z": 1])])]))
        let plain: JSONValue = .object(["x": .object(["y": 1]), "l": .array([.object([".priority": 1])])])
        #expect(FirebaseTree.withoutPriorities(plain) == plain)
    }

    @Test func serverValuesStayAsPlaceholdersForTheWriter() throws {
        #expect(try normalize([".sv": "timestamp"]) == .object([".sv": "timestamp"]))
        #expect(try normalize(["a": [".sv": ["increment": 2]]]) == .object(["a": .object([".sv": .object(["increment": 2])])]))
        #expect(throws: TreeError.self) { try normalize([".sv": "tomorrow"]) }
        #expect(throws: TreeError.self) { try normalize([".sv": "timestamp", "b": 1]) }
        #expect(throws: TreeError.self) { try normalize([".sv": ["increment": true]]) }
    }

    @Test func serverValuesResolve() throws {
        let value: JSONValue = .object(["at": .object([".sv": "timestamp"]), "n": .object([".sv": .object(["increment": 2])]), "k": 1])
        let resolved = try ServerValues.resolve(value, at: try DataPath(string: "x"), now: 1234) { path in
            path == (try? DataPath(string: "x/n")) ? .int(40) : nil
        }
        #expect(resolved == .object(["at": 1234, "n": 42, "k": 1]))
        #expect(ServerValues.contains(value) && !ServerValues.contains(resolved))
        #expect(ServerValues.add(.double(0.5), .int(1)) == .double(1.5))
        #expect(ServerValues.add(.double(0.5), .double(0.5)) == .int(1))
        #expect(ServerValues.add(.int(Int64.min), .int(-1)) == .double(Double(Int64.min) - 1))
    }

    /// An increment whose sum passes the largest double is refused where it would land,
    /// rather than stored as an infinity (which reads as nothing); one that stays at the
    /// largest double is taken.
    @Test func anIncrementPastTheLargestDoubleIsInvalid() throws {
        let increment: JSONValue = .object(["n": .object([".sv": .object(["increment": .double(.greatestFiniteMagnitude)])])])
        let at = try DataPath(string: "x")
        for current: JSONValue in [.double(.greatestFiniteMagnitude), .double(1e308)] {
            #expect(throws: TreeError.incrementOutOfRange(at: try DataPath(string: "x/n"))) {
                try ServerValues.resolve(increment, at: at, now: 0) { _ in current }
            }
        }
        let down: JSONValue = .object(["n": .object([".sv": .object(["increment": .double(-.greatestFiniteMagnitude)])])])
        #expect(throws: TreeError.self) { try ServerValues.resolve(down, at: at, now: 0) { _ in .double(-1e308) } }
        #expect(try ServerValues.resolve(increment, at: at, now: 0) { _ in .int(0) }
                == .object(["n": .double(.greatestFiniteMagnitude)]))
    }

    @Test func otherDotKeysAreInvalid() {
        #expect(throws: TreeError.invalidKey(key: ".foo", problem: .forbiddenCharacter("."), under: .root)) {
            try normalize([".foo": 1])
        }
    }

    @Test func keyLengthInData() throws {
        let ok = String(repeating: "k", count: 768)
        #expect(try normalize([ok: 1]) == [ok: 1])
        #expect(throws: TreeError.self) { try normalize([ok + "k": 1]) }
    }

    // MARK: Limits

    /// `{"k":{"k":...1}}` with `levels` keys.
    private func nested(_ levels: Int) -> JSONValue {
        var value: JSONValue = 1
        for _ in 0..<levels { value = ["k": value] }
        return value
    }

    @Test func depthLimitCountsThePathAndTheValue() throws {
        #expect(try normalize(nested(31)) != nil)
        #expect(throws: TreeError.tooDeep(depth: 32, under: try DataPath(segments: Array(repeating: "k", count: 31)))) {
            try normalize(nested(32))
        }
        let at10 = try DataPath(segments: Array(repeating: "p", count: 10))
        #expect(try normalize(nested(21), at: at10) != nil)
        #expect(throws: TreeError.self) { try normalize(nested(22), at: at10) }
        // Arrays count as levels too.
        var array: JSONValue = 1
        for _ in 0..<32 { array = [array] }
        #expect(throws: TreeError.self) { try normalize(array) }
        // A leaf at the deepest path is fine.
        let deepest = try DataPath(segments: Array(repeating: "p", count: 31))
        #expect(try normalize("x", at: deepest) == "x")
        #expect(throws: TreeError.self) { try normalize(["a": 1], at: deepest) }
    }

    @Test func stringLimit() throws {
        let limit = FirebaseTree.maxStringBytes
        #expect(limit == 10 * 1024 * 1024)
        let ok = String(repeating: "a", count: limit)
        #expect(try normalize(.string(ok)) == .string(ok))
        let over = ok + "a"
        #expect(throws: TreeError.stringTooLong(bytes: limit + 1, at: try path("s"))) { try normalize(["s": .string(over)]) }
        // Counted in UTF-8 bytes: half as many two-byte characters, plus one, is over.
        let twoByte = String(repeating: "é", count: limit / 2 + 1)
        #expect(throws: TreeError.self) { try normalize(.string(twoByte)) }
    }

    @Test func idempotent() throws {
        let value: JSONValue = ["a": [1, .null, 3.0], "b": ["c": [:], "d": "x"], "e": 2.5]
        let once = try normalize(value)!
        #expect(try normalize(once) == once)
    }

    // MARK: Shallow

    @Test func shallow() {
        #expect(FirebaseTree.shallow(["a": ["deep": 1], "b": 2]) == ["a": true, "b": true])
        #expect(FirebaseTree.shallow("leaf") == "leaf")
        #expect(FirebaseTree.shallow(5) == 5)
        #expect(FirebaseTree.shallow(.null) == .null)
        #expect(FirebaseTree.shallow([1, .null, 3]) == ["0": true, "2": true])
    }

    @Test func errorMessagesAreBounded() throws {
        let huge = String(repeating: "z", count: 10_000) + "."
        do {
            _ = try normalize([huge: 1])
            Issue.record("expected an error")
        } catch {
            #expect(error.description.count < 400)
            #expect(error.description.hasPrefix("Invalid data"))
        }
    }
}
