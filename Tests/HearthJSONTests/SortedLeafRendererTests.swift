import HearthJSON
import HearthTesting
import Testing

/// `SortedLeafRenderer` must write exactly what `JSONWriter.write(FirebaseTree.render(_:))`
/// writes for the assembled value.
@Suite struct SortedLeafRendererTests {
    /// The leaves of a stored (normalised) value, as (path relative to it, value), in path
    /// byte order: what the store's range scan yields.
    static func leaves(of value: JSONValue) -> [(path: String, value: JSONValue)] {
        var out: [(path: String, value: JSONValue)] = []
        func walk(_ value: JSONValue, _ path: String) {
            switch value {
            case .object(let members):
                for (key, child) in members { walk(child, path.isEmpty ? key.string : path + "/" + key.string) }
            case .null, .array: break
            default: out.append((path, value))
            }
        }
        walk(value, "")
        return out.sorted { $0.path.utf8.lexicographicallyPrecedes($1.path.utf8) }
    }

    static func rendered(_ value: JSONValue) -> String {
        var renderer = SortedLeafRenderer()
        for leaf in leaves(of: value) {
            var path = leaf.path
            path.withUTF8 { path in
                switch leaf.value {
                case .string(var text): text.withUTF8 { renderer.append(path: path, leaf: .string($0)) }
                case .int(let n): renderer.append(path: path, leaf: .int(n))
                case .double(let d): renderer.append(path: path, leaf: .double(d))
                case .bool(let b): renderer.append(path: path, leaf: .bool(b))
                default: Issue.record("not a leaf")
                }
            }
        }
        return String(decoding: renderer.render(), as: UTF8.self)
    }

    static func expected(_ value: JSONValue) -> String {
        String(decoding: JSONWriter.write(FirebaseTree.render(value)), as: UTF8.self)
    }

    @Test(arguments: [
        (#"null"#, #"null"#),
        (#"{"b":{"y":2,"x":"1"},"a":true}"#, #"{"a":true,"b":{"x":"1","y":2}}"#),
        // Integer keys first, numerically ("01" is 1); "a-b" sorts before "a/..." by bytes but after "a" as a key.
        (#"{"a-b":1,"a":{"z":1},"10":1,"9":1,"-1":1,"01":1}"#, #"{"-1":1,"01":1,"9":1,"10":1,"a":{"z":1},"a-b":1}"#),
        // Dense integer keys become an array, holes null; sparse ones stay an object.
        (#"{"l":{"0":"a","2":"c"},"s":{"0":1,"5":2}}"#, #"{"l":["a",null,"c"],"s":{"0":1,"5":2}}"#),
        (#"{"q\"k":"line\nbreak","e":1.5,"i":-3,"u":"ü😀"}"#, #"{"e":1.5,"i":-3,"q\"k":"line\nbreak","u":"ü😀"}"#),
    ])
    func literalTrees(_ input: String, _ output: String) throws {
        let value = try JSONParser.parse(Array(input.utf8))
        #expect(Self.rendered(value) == output)
        #expect(Self.expected(value) == output)
    }

    @Test func aLeafAtTheLocationItself() {
        var renderer = SortedLeafRenderer()
        let empty = UnsafeBufferPointer<UInt8>(start: nil, count: 0)
        renderer.append(path: empty, leaf: .double(0.1))
        #expect(String(decoding: renderer.render(), as: UTF8.self) == "0.1")
    }

    @Test func randomTreesMatchTheDictionaryPath() {
        var random = SplitMix64(seed: 0x50_27ED)
        let keys = ["0", "1", "2", "3", "4", "7", "10", "01", "-1", "-0", "2147483648", "a", "a-b", "a0", "ab", "b",
                    "B", "ä", "😀", "\u{FFFF}", "q\"k", "back\\slash", "x y", "-", "push-Nabc"]
        func tree(depth: Int) -> JSONValue {
            let roll = random.next() % 10
            if depth >= 4 || roll < 3 {
                switch random.next() % 5 {
                case 0: return .string("s\(random.next() % 100)\u{1}")
                case 1: return .int(Int64(random.next() % 2000) - 1000)
                case 2: return .double(Double(random.next() % 1000) / 7)
                case 3: return .bool(random.next() % 2 == 0)
                default: return .string(keys[Int(random.next() % UInt64(keys.count))])
                }
            }
            var members: [String: JSONValue] = [:]
            let count = 1 + Int(random.next() % 6)
            // Half the objects use only small integer keys, so arrays (dense and sparse) occur.
            let numeric = random.next() % 2 == 0
            for _ in 0..<count {
                let key = numeric ? String(random.next() % 8) : keys[Int(random.next() % UInt64(keys.count))]
                members[key] = tree(depth: depth + 1)
            }
            return .object(members)
        }
        var arrays = 0
        for _ in 0..<2000 {
            let value = tree(depth: 0)
            let expected = Self.expected(value)
            if expected.contains("[") { arrays += 1 }
            #expect(Self.rendered(value) == expected)
        }
        #expect(arrays > 100)  // the array rendering was exercised
    }
}
