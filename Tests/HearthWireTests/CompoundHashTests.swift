import Foundation
import HearthJSON
import HearthWire
import Testing

/// Compound hashes (wire spec §4.2) against an independent implementation of the iOS SDK's
/// `FCompoundHash`: `EndToEndTests/Python/compound_hash.py` (written from the SDK's
/// sources, run in the test virtualenv) computes the `ch` a client with the cached value
/// sends, with the SDK's size-based cuts; the server's hashes of the same ranges must be
/// the same, bit for bit, and a change must show in exactly the range that holds it.
@Suite struct CompoundHashTests {
    /// The `ch` the Python client computes for `value` (`threshold` 0: the SDK's own).
    static func clientHash(_ value: String, threshold: Int) throws -> (hashes: [String], posts: [String]) {
        let python = try #require(ProcessInfo.processInfo.environment["HEARTH_PYTHON"], "run scripts/test.sh (HEARTH_PYTHON not set)")
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("../EndToEndTests/Python/compound_hash.py").standardized.path
        let process = Process()
        process.executableURL = URL(fileURLWithPath: python)
        process.arguments = [script, String(threshold)]
        let (input, output) = (Pipe(), Pipe())
        process.standardInput = input
        process.standardOutput = output
        try process.run()
        input.fileHandleForWriting.write(Data(value.utf8))
        try input.fileHandleForWriting.close()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        try #require(process.terminationStatus == 0, "compound_hash.py failed")
        let ch = try JSONParser.parse(Array(data))
        guard case .object(let members) = ch, case .array(let hs)? = members["hs"], case .array(let ps)? = members["ps"] else {
            throw CompoundHashTestError.badOutput(String(decoding: data, as: UTF8.self))
        }
        return (hs.compactMap { if case .string(let s) = $0 { s } else { nil } }, ps.compactMap { if case .string(let s) = $0 { s } else { nil } })
    }

    enum CompoundHashTestError: Error { case badOutput(String) }

    static let values: [(String, Int)] = [
        (#"{"a":{"x":1,"y":"two"},"b":true,"c":{"d":[1,2,3]}}"#, 20),
        (#"{"s":"quote \" and back\\slash","u":"héllo ✓ 𝄞","n":-0.1,"big":1e21,"f":false,"i":9007199254740993}"#, 24),
        (#"{"10":"ten","2":"two","-1":"minus","007":"lead","b":"bee","A":"ay","-Nx":"push"}"#, 16),
        (#"{"p":{"b":1,"a":2,".priority":5},"q":{"-a":1,"0":2,".priority":"low"},"r":{".value":"v",".priority":1.5}}"#, 12),
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

    @Test func aMalformedCompoundHashIsRefused() {
        #expect(CompoundHash.changedRanges(.object(["a": 1]), hashes: ["x", "y"], posts: []) == nil)
        #expect(CompoundHash.changedRanges(.object(["a": 1]), hashes: [], posts: []) == nil)
    }
}
