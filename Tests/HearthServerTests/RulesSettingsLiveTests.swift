import Foundation
import HearthTesting
import Testing

/// `GET`/`PUT /.settings/rules.json` for admins.
@Suite struct RulesSettingsLiveTests {
    let owner = [("Authorization", "Bearer owner")]
    static let rules = """
    {
      // comments are kept in the file
      "rules": {"open": {".read": true, ".write": true}}
    }
    """

    @Test func adminsReadTheFileAsWrittenOrAsStrictJSON() async throws {
        let server = try LiveServer(rules: Self.rules) { $0.auth.acceptEmulatorOwner = true }
        let raw = try server.request("GET", "/.settings/rules.json", headers: owner)
        #expect(raw.status == 200 && raw.body == Self.rules)
        let strict = try server.request("GET", "/.settings/rules.json?format=strict", headers: owner)
        #expect(strict.status == 200 && strict.body == #"{"rules":{"open":{".read":true,".write":true}}}"#)
        let user = try server.anonymousUser()
        #expect(try server.request("GET", "/.settings/rules.json", headers: [("Authorization", "Bearer \(user.token)")]).status == 401)
        #expect(try server.request("GET", "/.settings/rules.json").status == 401)
        #expect(try server.request("DELETE", "/.settings/rules.json", headers: owner).status == 405)
        await server.stop()
    }

    @Test func aPutIsCheckedSavedAndSwappedInAndADryRunOnlyChecks() async throws {
        let server = try LiveServer(rules: Self.rules) { $0.auth.acceptEmulatorOwner = true }
        let stream = try server.stream("/open.json")
        _ = try stream.nextEvent()
        let invalid = try server.request("PUT", "/.settings/rules.json", #"{"rules": {".read": "auth.uid =="}}"#, headers: owner)
        #expect(invalid.status == 400 && invalid.body.contains("Line 1"))
        let closed = #"{"rules": {"other": {".read": true}}}"#
        let dry = try server.request("PUT", "/.settings/rules.json?dryRun=true", closed, headers: owner)
        #expect(dry.status == 200 && dry.body == #"{"status":"ok"}"#)
        #expect(try server.request("GET", "/open.json").status == 200)  // unchanged
        let put = try server.request("PUT", "/.settings/rules.json", closed, headers: owner)
        #expect(put.status == 200 && put.body == #"{"status":"ok"}"#)
        #expect(try server.request("GET", "/open.json").status == 401)
        #expect(try String(contentsOfFile: server.rulesPath, encoding: .utf8) == closed)
        #expect(try stream.nextEvent() == ReceivedEvent(name: "cancel", id: nil, data: "null"))
        await server.stop()
    }
}
