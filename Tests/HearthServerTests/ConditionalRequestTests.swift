import Foundation
import HearthJSON
import HearthRules
import Testing
@testable import HearthServer

/// ETags and conditional requests (docs/protocol/rest.md §1.4), in-process through the
/// router.
@Suite struct ConditionalRequestTests {
    let etagHeader = [("X-Firebase-ETag", "true")]

    @Test func getReturnsAnETagThatChangesExactlyWhenTheSubtreeDoes() async throws {
        let h = try RouterHarness()
        _ = await h.send("PUT", "/a.json", #"{"x":{"y":1},"z":2}"#)
        let first = await h.send("GET", "/a/x.json", headers: etagHeader)
        let tag = try #require(first.headers["ETag"])
        #expect(tag.count == 28)  // base64 of 20 bytes
        #expect(await h.send("GET", "/a/x.json").headers["ETag"] == nil)  // only when asked
        _ = await h.send("PUT", "/a/z.json", "3")  // outside /a/x
        #expect(await h.send("GET", "/a/x.json", headers: etagHeader).headers["ETag"] == tag)
        _ = await h.send("PUT", "/a/x/y.json", "2")  // below /a/x
        let changed = try #require(await h.send("GET", "/a/x.json", headers: etagHeader).headers["ETag"])
        #expect(changed != tag)
        _ = await h.send("PUT", "/a/x/y.json", "1")  // back to the same value: the same tag
        #expect(await h.send("GET", "/a/x.json", headers: etagHeader).headers["ETag"] == tag)
        // A missing node has a tag too (that of null).
        #expect(await h.send("GET", "/nothing.json", headers: etagHeader).headers["ETag"] == ETag.of(.null))
    }

    @Test func ifNoneMatchGives304WhileUnchanged() async throws {
        let h = try RouterHarness()
        _ = await h.send("PUT", "/a.json", #"{"x":1}"#)
        let tag = try #require(await h.send("GET", "/a.json", headers: etagHeader).headers["ETag"])
        let same = await h.send("GET", "/a.json", headers: [("If-None-Match", tag)])
        #expect(same.status == 304 && same.body.isEmpty && same.headers["ETag"] == tag)
        #expect(await h.send("GET", "/a.json", headers: [("If-None-Match", "\"\(tag)\"")]).status == 304)  // quoted form
        _ = await h.send("PUT", "/a/x.json", "2")
        let changed = await h.send("GET", "/a.json", headers: [("If-None-Match", tag)])
        #expect(changed.status == 200 && changed.text == #"{"x":2}"#)
        // The new tag comes along unasked (the Python SDK's get_if_changed returns it).
        #expect(changed.headers["ETag"] == ETag.of(.object(["x": .int(2)])))
    }

    @Test func ifMatchWritesOnlyWhileTheTagMatches() async throws {
        let h = try RouterHarness()
        _ = await h.send("PUT", "/counter.json", "1")
        let tag = try #require(await h.send("GET", "/counter.json", headers: etagHeader).headers["ETag"])
        let ok = await h.send("PUT", "/counter.json", "2", headers: [("if-match", tag)])
        #expect(ok.status == 200 && ok.text == "2")
        #expect(ok.headers["ETag"] == ETag.of(.int(2)))
        // The old tag no longer matches: 412, the current tag, the current value.
        let stale = await h.send("PUT", "/counter.json", "3", headers: [("if-match", tag)])
        #expect(stale.status == 412 && stale.text == "2" && stale.headers["ETag"] == ETag.of(.int(2)))
        #expect(await h.send("GET", "/counter.json").text == "2")
        // DELETE too.
        #expect(await h.send("DELETE", "/counter.json", headers: [("if-match", tag)]).status == 412)
        let deleted = await h.send("DELETE", "/counter.json", headers: [("if-match", ETag.of(.int(2)))])
        #expect(deleted.status == 200 && deleted.headers["ETag"] == ETag.of(.null))
        // Creating where nothing is: the tag of null matches.
        #expect(await h.send("PUT", "/fresh.json", #"{"a":1}"#, headers: [("if-match", ETag.of(.null))]).status == 200)
    }

    /// A tag is compared as sent unless it is quoted after `W/`: tags are base64, so about
    /// one value in 4,096 has a tag beginning with `W/`, and such a tag sent as received
    /// must match (firebase-admin sends it so, and its `transaction()` retried until it
    /// aborted when the marker was stripped).
    @Test func theFormsOfATagClientsSend() {
        #expect(ETag.unquoted("W/d64fK/f/JXrqq9W3BBEyWomzo=") == "W/d64fK/f/JXrqq9W3BBEyWomzo=")
        #expect(ETag.unquoted("\"W/d64fK/f/JXrqq9W3BBEyWomzo=\"") == "W/d64fK/f/JXrqq9W3BBEyWomzo=")
        #expect(ETag.unquoted("W/\"W/d64fK/f/JXrqq9W3BBEyWomzo=\"") == "W/d64fK/f/JXrqq9W3BBEyWomzo=")
        #expect(ETag.unquoted("W/\"abc\"") == "abc")
        #expect(ETag.unquoted(" \"abc\" ") == "abc")
        #expect(ETag.unquoted("abc") == "abc")
        // Not a quoted tag: compared whole, so it matches nothing it should not.
        #expect(ETag.unquoted("W/\"abc") == "W/\"abc")
        #expect(ETag.unquoted("\"") == "\"")
        #expect(ETag.unquoted("W/") == "W/")
        #expect(ETag.unquoted("W/\"\"") == "")
    }

    @Test func aValueWhoseTagBeginsWithTheWeakMarkerMatchesItsOwnTag() async throws {
        let h = try RouterHarness()
        let (value, tag) = try #require(Self.valueWithTag(beginning: "W/"))
        _ = await h.send("PUT", "/cas.json", String(value))
        #expect(await h.send("GET", "/cas.json", headers: etagHeader).headers["ETag"] == tag)
        // if-none-match: 304 for the tag as received, quoted, and weak-quoted.
        for sent in [tag, "\"\(tag)\"", "W/\"\(tag)\""] {
            #expect(await h.send("GET", "/cas.json", headers: [("If-None-Match", sent)]).status == 304, "\(sent)")
        }
        // if-match: the tag as received writes (it was refused with 412 and this very tag).
        let written = await h.send("PUT", "/cas.json", String(value + 1), headers: [("if-match", tag)])
        #expect(written.status == 200 && written.text == String(value + 1))
        // The same tag with its first two characters taken as a marker names another value.
        let stripped = String(tag.dropFirst(2))
        _ = await h.send("PUT", "/cas.json", String(value))
        #expect(await h.send("PUT", "/cas.json", "0", headers: [("if-match", stripped)]).status == 412)
        #expect(await h.send("PUT", "/cas.json", "0", headers: [("if-match", "W/\"\(tag)\"")]).status == 200)
    }

    /// The first integer from 0 whose ETag begins with `prefix`, and that tag (about 4,096
    /// hashes for a two-character prefix).
    static func valueWithTag(beginning prefix: String) -> (Int, String)? {
        for value in 0..<1_000_000 {
            let tag = ETag.of(.int(Int64(value)))
            if tag.hasPrefix(prefix) { return (value, tag) }
        }
        return nil
    }

    /// `if-match` where the caller may write but not read: 401 whatever the tag,
    /// the right one included, before anything is compared, and nothing is written; so the
    /// answer tells nothing of the data (a right guess used to commit, a wrong one 401, and
    /// the tag of null told whether anything was there).
    @Test func ifMatchOnDataTheCallerCannotReadIsRefusedWithoutComparing() async throws {
        let rules = #"{"rules": {"box": {".write": true}, "empty": {".write": true}}}"#
        let h = try RouterHarness(policy: RulesAccessPolicy(rules: RuleSet.compile(rules)))
        _ = await h.send("PUT", "/box.json", #""secret""#)
        for tag in [ETag.of(.string("secret")), "stale", ETag.of(.null)] {
            let response = await h.send("PUT", "/box.json", #""mine""#, headers: [("if-match", tag)])
            #expect(response.status == 401 && response.text == #"{"error":"Permission denied"}"#, "\(tag)")
            #expect(await h.send("DELETE", "/box.json", headers: [("if-match", tag)]).status == 401)
        }
        #expect(await h.send("PUT", "/empty.json", "1", headers: [("if-match", ETag.of(.null))]).status == 401)
        #expect(try h.store.readSync { try $0.value(at: DataPath(string: "/box")) } == .string("secret"))
        #expect(try h.store.readSync { try $0.value(at: DataPath(string: "/empty")) } == .null)
        // Without a condition the write is allowed, as the rules say.
        #expect(await h.send("PUT", "/box.json", #""mine""#).status == 200)
    }
}

/// Server values (docs/protocol/rest.md §1.5).
@Suite struct ServerValueTests {
    @Test func timestampsResolveAtCommitAndTheEchoShowsThem() async throws {
        let h = try RouterHarness()
        let before = Int64(Date().timeIntervalSince1970 * 1000)
        let put = await h.send("PUT", "/a.json", #"{"at":{".sv":"timestamp"},"n":1}"#)
        #expect(put.status == 200)
        guard case .object(let echo)? = put.json, case .int(let at)? = echo["at"] else {
            Issue.record("no resolved timestamp in \(put.text)")
            return
        }
        #expect(at >= before && at <= Int64(Date().timeIntervalSince1970 * 1000))
        #expect(await h.send("GET", "/a/at.json").text == "\(at)")
        // A bare placeholder as the whole body, and POST.
        #expect(Int64(await h.send("PUT", "/t.json", #"{".sv":"timestamp"}"#).text) != nil)
        let pushed = await h.send("POST", "/log.json", #"{"at":{".sv":"timestamp"}}"#)
        #expect(pushed.status == 200)
    }

    @Test func incrementsAddToTheCurrentNumber() async throws {
        let h = try RouterHarness()
        #expect(await h.send("PUT", "/c.json", #"{".sv":{"increment":5}}"#).text == "5")  // missing: the delta
        #expect(await h.send("PUT", "/c.json", #"{".sv":{"increment":2}}"#).text == "7")
        #expect(await h.send("PUT", "/c.json", #"{".sv":{"increment":0.5}}"#).text == "7.5")
        _ = await h.send("PUT", "/s.json", #""text""#)
        #expect(await h.send("PUT", "/s.json", #"{".sv":{"increment":1}}"#).text == "1")  // not a number: the delta
        _ = await h.send("PUT", "/big.json", "9223372036854775807")
        #expect(await h.send("PUT", "/big.json", #"{".sv":{"increment":1}}"#).text == "9.223372036854776e+18")
        // In a multi-path PATCH, each against its own current value; the echo shows them resolved.
        _ = await h.send("PUT", "/stats.json", #"{"likes":10,"views":100}"#)
        let patch = await h.send("PATCH", "/stats.json", #"{"likes":{".sv":{"increment":1}},"views":{".sv":{"increment":-1}}}"#)
        #expect(patch.json == .object(["likes": .int(11), "views": .int(99)]))
    }

    /// An increment whose sum would pass the largest double is a 400 naming where, and the
    /// number stays as it was (stored as an infinity it would read as nothing); in a
    /// multi-path PATCH nothing of the write is written.
    @Test func anIncrementPastTheLargestNumberIs400AndKeepsTheNumber() async throws {
        let h = try RouterHarness()
        #expect(await h.send("PUT", "/c.json", "1e308").status == 200)
        let put = await h.send("PUT", "/c.json", #"{".sv":{"increment":1e308}}"#)
        #expect(put.status == 400)
        #expect(put.errorMessage == "Invalid data at /c: the increment would pass the largest number, 1.7976931348623157e+308",
                "\(put.text)")
        #expect(await h.send("GET", "/c.json").text == "1e+308")
        let patch = await h.send("PATCH", "/.json", #"{"c":{".sv":{"increment":-1e308}},"d":{".sv":{"increment":-1.7976931348623157e308}},"e":1}"#)
        #expect(patch.status == 200, "a sum that stays in range: \(patch.text)")
        let over = await h.send("PATCH", "/.json", #"{"d":{".sv":{"increment":-1e308}},"f":1}"#)
        #expect(over.status == 400, "\(over.text)")
        #expect(await h.send("GET", "/.json").json == .object(["c": .int(0), "d": .double(-.greatestFiniteMagnitude), "e": .int(1)]))
    }

    @Test func concurrentIncrementsAreAtomic() async throws {
        let h = try RouterHarness()
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<50 {
                group.addTask { _ = await h.send("PUT", "/n.json", #"{".sv":{"increment":1}}"#) }
            }
        }
        #expect(await h.send("GET", "/n.json").text == "50")
    }

    @Test func rulesSeeTheResolvedValue() async throws {
        let rules = #"{"rules": {"t": {".write": "newData.isNumber() && newData.val() <= now", ".read": true}}}"#
        let h = try RouterHarness(policy: RulesAccessPolicy(rules: RuleSet.compile(rules)))
        #expect(await h.send("PUT", "/t.json", #"{".sv":"timestamp"}"#).status == 200)
        #expect(await h.send("PUT", "/t.json", "\(Int64.max)").status == 401)
    }

    @Test func malformedServerValuesAre400() async throws {
        let h = try RouterHarness()
        for body in [#"{".sv":"now"}"#, #"{".sv":{"increment":"1"}}"#, #"{".sv":"timestamp","x":1}"#, #"{".sv":{"increment":1,"x":2}}"#] {
            let response = await h.send("PUT", "/a.json", body)
            #expect(response.status == 400, "\(body)")
            #expect(response.errorMessage?.contains("server value") == true || response.errorMessage?.contains(".sv") == true, "\(body): \(response.text)")
        }
    }
}
