import Foundation
import HearthJSON
import HearthTesting
import HearthWire
import Testing

/// Compound hashes (docs/protocol/wire.md §4.2) against an independent implementation of
/// the iOS SDK's `FCompoundHash`: `EndToEndTests/Python/compound_hash.py` (written from the
/// SDK's sources, run in the test virtualenv) computes the `ch` a client with the cached
/// value sends, with the SDK's size-based cuts; the server's hashes of the same ranges must
/// be the same, bit for bit, and a change must show in exactly the range that holds it.
@Suite struct CompoundHashTests {
    /// The `ch` the Python client computes for `value` (`threshold` 0: the SDK's own).
    static func clientHash(_ value: String, threshold: Int) throws -> (hashes: [String], posts: [String]) {
        let data = try python([String(threshold)], input: value)
        let ch = try JSONParser.parse(Array(data))
        guard case .object(let members) = ch, case .array(let hs)? = members["hs"], case .array(let ps)? = members["ps"] else {
            throw CompoundHashTestError.badOutput(String(decoding: data, as: UTF8.self))
        }
        return (hs.compactMap { if case .string(let s) = $0 { s } else { nil } }, ps.compactMap { if case .string(let s) = $0 { s } else { nil } })
    }

    /// `compound_hash.py` with `arguments`, `input` on its standard input: its output.
    static func python(_ arguments: [String], input text: String) throws -> Data {
        let python = try #require(ProcessInfo.processInfo.environment["HEARTH_PYTHON"], "run scripts/test.sh (HEARTH_PYTHON not set)")
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("../EndToEndTests/Python/compound_hash.py").standardized.path
        let process = ChildProcess()
        process.executableURL = URL(fileURLWithPath: python)
        process.arguments = [script] + arguments
        let (input, output) = (Pipe(), Pipe())
        process.standardInput = input
        process.standardOutput = output
        try process.run()
        input.fileHandleForWriting.write(Data(text.utf8))
        try input.fileHandleForWriting.close()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        try #require(process.terminationStatus == 0, "compound_hash.py failed")
        return data
    }

    enum CompoundHashTestError: Error { case badOutput(String) }

    static let values: [(String, Int)] = [
        (#"{"a":{"x":1,"y":"two"},"b":true,"c":{"d":[1,2,3]}}"#, 20),
        (#"{"s":"quote \" and back\\slash","u":"héllo ✓ 𝄞","n":-0.1,"big":1e21,"f":false,"i":9007199254740993}"#, 24),
        (#"{"10":"ten","2":"two","-1":"minus","007":"lead","b":"bee","A":"ay","-Nx":"push"}"#, 16),
        (#"{"p":{"b":1,"a":2,".priority":5},"q":{"-a":1,"0":2,"b":5,".priority":"low"},"r":{".value":"v",".priority":1.5}}"#, 12),
        (#"{"leaf":"only"}"#, 0),
        (#""a root leaf""#, 0),
    ]

    @Test(arguments: 0..<values.count)
    func rangeHashesMatchTheSDKs(index: Int) throws {
        let (text, threshold) = Self.values[index]
        let (hashes, posts) = try Self.clientHash(text, threshold: threshold)
        let value = try JSONParser.parse(Array(text.utf8))
        #expect(CompoundHash.changedRanges(value, hashes: hashes, posts: posts) == [], "\(text): \(hashes) \(posts)")
        // Each range's hash is really compared: a wrong one is reported, alone.
        for wrong in hashes.indices {
            var tampered = hashes
            tampered[wrong] = "AAAAAAAAAAAAAAAAAAAAAAAAAAA="
            let ranges = try #require(CompoundHash.changedRanges(value, hashes: tampered, posts: posts))
            #expect(ranges.count == 1)
            #expect(ranges.first?.start == (wrong == 0 ? nil : posts[wrong - 1]))
            #expect(ranges.first?.end == (wrong == posts.count ? nil : posts[wrong]))
        }
    }

    /// 200 favourites, as the reference app stores them, cut by the SDK's own threshold.
    static var favourites: String {
        let items = (0..<200).map { i in
            #""-fav\#(1000 + i)":{"name":"Place \#(i)","createdAt":\#(1_700_000_000_000 + i),"latitude":59.\#(i),"longitude":10.7}"#
        }
        return "{" + items.joined(separator: ",") + "}"
    }

    @Test func aChangeShowsInTheRangeThatHoldsItOnly() throws {
        let (hashes, posts) = try Self.clientHash(Self.favourites, threshold: 0)
        #expect(posts.count > 10, "the SDK cuts 200 favourites into many ranges")
        var changed = try JSONParser.parse(Array(Self.favourites.utf8))
        guard case .object(var members) = changed, case .object(var favourite)? = members["-fav1100"] else { return }
        favourite["name"] = "Renamed"
        members["-fav1100"] = .object(favourite)
        members["-fav1150"] = nil
        members["-fav9999"] = .object(["name": "New"])
        changed = .object(members)
        let ranges = try #require(CompoundHash.changedRanges(changed, hashes: hashes, posts: posts))
        #expect(ranges.count == 3, "\(ranges.map { ($0.start, $0.end) })")
        // The renamed one is in the first range reported, with the new name; the deleted
        // one's range no longer holds it; the new one is after the last cut.
        let renamed = try #require(ranges.first { range in
            if case .object(let m) = range.value, case .object(let f)? = m["-fav1100"] { return f["name"] == "Renamed" }
            return false
        })
        #expect(renamed.start != nil && renamed.end != nil)
        #expect(ranges.last?.end == nil)
        if case .object(let last)? = ranges.last?.value { #expect(last["-fav9999"] != nil) } else { Issue.record("no value after the last cut") }
    }

    /// (client's cache, server's value, split threshold): priorities (on objects, on
    /// `.value` leaves, changed alone), arrays, non-ASCII, quoted and integer keys, a
    /// change at the first and at the last key.
    static let changes: [(String, String, Int)] = [
        (#"{"p":{"b":1,"a":2,".priority":5},"q":{"-a":1,"0":2,"b":5,".priority":"low"},"r":{".value":"v",".priority":1.5},"s":3}"#,
         #"{"p":{"b":1,"a":2,".priority":6},"q":{"-a":2,"0":2,"b":5,".priority":"low"},"r":{".value":"w",".priority":1.5},"s":3,"é":{"ü":"x"}}"#, 12),
        (#"{"list":[1,2,3],"z":{"a":[{"b":"c"},{"b":"e"}]},"zz":true}"#, #"{"list":[1,5,3,4],"z":{"a":[{"b":"d"},{"b":"e"}]},"zz":true}"#, 8),
        (#"{"ключ":{"a":"x"},"𝄞":1,"q\"k":{"b\\":2,"c":3},"\#u{FFFF}":3,"10":1,"9":2}"#,
         #"{"ключ":{"a":"y"},"𝄞":2,"q\"k":{"c":3},"\#u{FFFF}":4,"10":1,"9":3}"#, 10),
        (#"{"a":{"b":{"c":1,"d":2},"e":3},"f":4}"#, #"{"a":{"b":{"c":1,"d":2,"d2":5},"e":3}}"#, 6),
    ]

    /// A client that applies the `rm` as the SDK's FRangeMerge does (the Python port) ends
    /// with the server's value, whatever the shape of what changed.
    @Test(arguments: 0..<changes.count)
    func theRangesMergedIntoTheCacheGiveTheServersValue(index: Int) throws {
        let (cached, current, threshold) = Self.changes[index]
        let (hashes, posts) = try Self.clientHash(cached, threshold: threshold)
        #expect(posts.count >= 2, "the threshold cuts \(cached) into ranges")
        let value = try JSONParser.parse(Array(current.utf8))
        let ranges = try #require(CompoundHash.changedRanges(value, hashes: hashes, posts: posts))
        #expect(!ranges.isEmpty && ranges.count < hashes.count, "\(ranges.count) of \(hashes.count) ranges")
        let rm: [JSONValue] = ranges.map { range in
            var members: [JSONKey: JSONValue] = ["m": range.value]
            if let start = range.start { members["s"] = .string(start) }
            if let end = range.end { members["e"] = .string(end) }
            return .object(members)
        }
        let request = JSONValue.object(["cache": try JSONParser.parse(Array(cached.utf8)), "rm": .array(rm), "value": value])
        let answer = try JSONParser.parse(Array(try Self.python(["merge"], input: String(decoding: JSONWriter.write(request), as: UTF8.self))))
        guard case .object(let members) = answer else { throw CompoundHashTestError.badOutput("\(answer)") }
        #expect(members["equal"] == .bool(true), "\(answer)")
    }

    @Test func aMalformedCompoundHashIsRefused() {
        #expect(CompoundHash.changedRanges(.object(["a": 1]), hashes: ["x", "y"], posts: []) == nil)
        #expect(CompoundHash.changedRanges(.object(["a": 1]), hashes: [], posts: []) == nil)
    }
}
