import Foundation
import HearthJSON
@testable import HearthServer
import HearthTesting
import Testing

/// `/.inspect/coverage(.json)` against a live server: every transport's evaluations are
/// counted, per namespace, reset by a rules replacement, and only for whom may see them
/// (docs/rules.md, "Coverage"; docs/protocol/emulator.md §4.9). Runs on PostgreSQL too
/// (`HEARTH_TEST_STORE=postgres`).
@Suite(.serialized) struct RulesCoverageLiveTests {
    static let owner = [("Authorization", "Bearer owner")]
    static let rules = """
    {"rules": {
      "rest": {".read": "auth != null", ".write": "auth != null"},
      "sse": {".read": "auth == null"},
      "watched": {".read": "root.child('open').val() == true"},
      "open": {".write": true},
      "wire": {".read": true, ".write": "newData.exists()", ".indexOn": ["score", "name"], "$k": {".validate": "newData.hasChild('score')"}},
      "never": {".read": "auth.uid == 'nobody'"}
    }}
    """

    static func emulator() throws -> LiveServer {
        try LiveServer(rules: rules) { $0.auth.acceptEmulatorOwner = true }
    }

    /// coverage.json of `ns`: (status, body as JSON).
    static func report(_ server: LiveServer, ns: String, headers: [(String, String)] = []) throws -> (status: Int, json: JSONValue) {
        let answer = try server.request("GET", "/.inspect/coverage.json" + (ns.isEmpty ? "" : "?ns=\(ns)"), headers: headers)
        return (answer.status, try JSONParser.parse(Array(answer.body.utf8)))
    }

    /// The counts of the site with text `text` in `rule`, by result name.
    static func counts(_ report: JSONValue, rule: String, text: String) -> [String: Int64] {
        guard case .array(let expressions)? = report.objectValue?["expressions"] else { return ["missing": 1] }
        let matching = expressions.filter {
            $0.objectValue?["rule"]?.stringValue == rule && $0.objectValue?["text"]?.stringValue == text
        }
        guard matching.count == 1, case .object(let counts)? = matching[0].objectValue?["counts"] else { return ["sites": Int64(matching.count)] }
        var result: [String: Int64] = [:]
        for (key, value) in counts { if case .int(let count) = value, count > 0 { result[key.string] = count } }
        return result
    }

    @Test func everyTransportIsCountedInItsNamespace() async throws {
        let server = try Self.emulator()
        let alice = [("Authorization", "Bearer " + EmulatorModeLiveTests.mockToken(uid: "alice"))]
        // REST: a denied read, an allowed write.
        #expect(try server.request("GET", "/rest.json?ns=demo").status == 401)
        #expect(try server.request("PUT", "/rest/x.json?ns=demo", "1", headers: alice).status == 200)
        // SSE: one read decision.
        let sse = try server.stream("/sse.json?ns=demo")
        #expect(try sse.nextEvent().name == "put")
        sse.close()
        // A listen re-checked after a write: its rule reads data, so each write re-decides it.
        #expect(try server.request("PUT", "/open.json?ns=demo", "true").status == 200)
        let watched = try server.stream("/watched.json?ns=demo")
        #expect(try watched.nextEvent().name == "put")
        #expect(try server.request("PUT", "/open.json?ns=demo", "false").status == 200)
        #expect(try watched.nextEvent().name == "cancel")
        watched.close()
        // The wire protocol.
        let wire = try WireLiveTests.client("wire", port: server.port, script: "coverage_client.py")
        #expect(wire.status == 0 && wire.output.hasSuffix("done\n"), "\(wire.output)")

        let (status, report) = try Self.report(server, ns: "demo")
        #expect(status == 200, "\(report)")
        #expect(Self.counts(report, rule: "/rules/rest/.read", text: "auth != null") == ["false": 1])
        #expect(Self.counts(report, rule: "/rules/rest/.write", text: "auth != null") == ["true": 1])
        #expect(Self.counts(report, rule: "/rules/sse/.read", text: "auth == null") == ["true": 1])
        // At the stream's start (true), then re-checked after the write that closes it (false).
        #expect(Self.counts(report, rule: "/rules/watched/.read", text: "root.child('open').val() == true") == ["true": 1, "false": 1])
        #expect(Self.counts(report, rule: "/rules/wire/.read", text: "true") == ["true": 2])
        #expect(Self.counts(report, rule: "/rules/wire/.write", text: "newData.exists()") == ["true": 1])
        #expect(Self.counts(report, rule: "/rules/wire/$k/.validate", text: "newData.hasChild('score')") == ["true": 1])
        #expect(Self.counts(report, rule: "/rules/wire/.indexOn", text: "score") == ["used": 1])
        #expect(Self.counts(report, rule: "/rules/wire/.indexOn", text: "name").isEmpty)
        #expect(Self.counts(report, rule: "/rules/never/.read", text: "auth.uid == 'nobody'").isEmpty)
        #expect(report.objectValue?["rules"]?.stringValue == Self.rules)
        // The default namespace saw none of it.
        let (_, primary) = try Self.report(server, ns: "")
        #expect(Self.counts(primary, rule: "/rules/rest/.write", text: "auth != null").isEmpty)
        await server.stop()
    }

    @Test func aRulesReplacementStartsAfreshAndNamespacesAreApart() async throws {
        let server = try Self.emulator()
        #expect(try server.request("PUT", "/open.json?ns=one", "true").status == 200)
        #expect(try server.request("PUT", "/open.json?ns=two", "true").status == 200)
        #expect(try server.request("PUT", "/open.json?ns=two", "false").status == 200)
        #expect(Self.counts(try Self.report(server, ns: "one").json, rule: "/rules/open/.write", text: "true") == ["true": 1])
        #expect(Self.counts(try Self.report(server, ns: "two").json, rule: "/rules/open/.write", text: "true") == ["true": 2])
        let replaced = #"{"rules": {"open": {".write": "auth == null"}}}"#
        #expect(try server.request("PUT", "/.settings/rules.json?ns=one", replaced, headers: Self.owner).status == 200)
        let fresh = try Self.report(server, ns: "one").json
        #expect(Self.counts(fresh, rule: "/rules/open/.write", text: "auth == null").isEmpty)
        #expect(fresh.objectValue?["rules"]?.stringValue == replaced)
        #expect(Self.counts(try Self.report(server, ns: "two").json, rule: "/rules/open/.write", text: "true") == ["true": 2])
        #expect(try server.request("PUT", "/open.json?ns=one", "1").status == 200)
        #expect(Self.counts(try Self.report(server, ns: "one").json, rule: "/rules/open/.write", text: "auth == null") == ["true": 1])
        await server.stop()
    }

    /// In emulator mode without a credential only from this machine, to a loopback host,
    /// from no foreign page; anyone else needs the owner (an admin).
    @Test func emulatorModeReadersAreLocal() async throws {
        let server = try Self.emulator()
        func status(host: String = "127.0.0.1", _ headers: [(String, String)] = []) throws -> Int {
            try liveExchange(port: server.port, "GET", "/.inspect/coverage.json", headers: headers, host: host).head.status
        }
        #expect(try status() == 200 && status(host: "localhost:9000") == 200 && status(host: "[::1]") == 200)
        #expect(try status(host: "rebound.example:9000") == 401)
        #expect(try status([("X-Forwarded-For", "203.0.113.9")]) == 401)
        #expect(try status([("Origin", "https://evil.example")]) == 401)
        #expect(try status(host: "rebound.example:9000", Self.owner) == 200)
        await server.stop()
    }

    @Test func anUnknownNamespaceIs404() async throws {
        let server = try Self.emulator()
        let answer = try server.request("GET", "/.inspect/coverage.json?ns=nosuch")
        #expect(answer.status == 404 && answer.body.contains(#""error""#) && answer.body.contains("nosuch"), "\(answer)")
        #expect(try server.request("GET", "/.inspect/coverage?ns=nosuch").status == 404)
        await server.stop()
    }

    @Test func thePageIsHTMLUnderTheConsolesPolicyWithItsStylesheet() async throws {
        let server = try Self.emulator()
        #expect(try server.request("PUT", "/open.json", "true").status == 200)
        let page = try server.exchange("GET", "/.inspect/coverage")
        #expect(page.head.status == 200 && page.head.header("Content-Type") == "text/html; charset=utf-8")
        #expect(page.head.header("Content-Security-Policy")?.contains("script-src 'self'") == true)
        #expect(!page.body.contains("<script") && !page.body.contains("style=") && page.body.contains(CoveragePage.stylesheetPath))
        #expect(page.body.contains(#"<span class="cov cov-partial" data-site="#))
        #expect(page.body.contains("/rules/open/.write — evaluated 1 time: true 1"))
        #expect(page.body.contains(#"title="/rules/never/.read — never evaluated""#))
        let css = try server.exchange("GET", CoveragePage.stylesheetPath)
        #expect(css.head.status == 200 && css.head.header("Content-Type") == "text/css; charset=utf-8" && css.body.contains(".cov-none"))
        #expect(try server.request("POST", "/.inspect/coverage.json").status == 405)
        await server.stop()
    }

    /// Outside emulator mode: admins only, and only when recording is turned on.
    @Test func outsideEmulatorModeAdminsOnlyAndOnlyWhenTurnedOn() async throws {
        let off = try LiveServer(rules: Self.rules)
        let offAdmin = [("Authorization", "Bearer " + (try off.service.authContext.service.operatorToken(now: WallClock.now)))]
        let refused = try off.request("GET", "/.inspect/coverage.json", headers: offAdmin)
        #expect(refused.status == 409 && refused.body.contains("rules coverage recording is off"), "\(refused)")
        await off.stop()

        let server = try LiveServer(rules: Self.rules) { $0.recordRulesCoverage = true }
        #expect(try server.request("PUT", "/open.json", "true").status == 200)
        #expect(try server.request("GET", "/.inspect/coverage.json").status == 401)
        #expect(try server.request("GET", "/.inspect/coverage").status == 401)
        // The emulator's owner is no admin here, nor is a user.
        #expect(try server.request("GET", "/.inspect/coverage.json", headers: Self.owner).status == 401)
        let user = try server.anonymousUser()
        #expect(try server.request("GET", "/.inspect/coverage.json", headers: [("Authorization", "Bearer \(user.token)")]).status == 401)
        let admin = [("Authorization", "Bearer " + (try server.service.authContext.service.operatorToken(now: WallClock.now)))]
        let (status, report) = try Self.report(server, ns: "", headers: admin)
        #expect(status == 200)
        #expect(Self.counts(report, rule: "/rules/open/.write", text: "true") == ["true": 1])
        await server.stop()
    }
}

private enum WallClock {
    static var now: Int64 { Int64(Date().timeIntervalSince1970 * 1000) }
}
