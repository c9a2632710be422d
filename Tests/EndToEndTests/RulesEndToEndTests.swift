import Foundation
import Testing

/// The rules file as an operator meets it: refused when invalid, enforced, reloaded on SIGHUP,
/// checked and tested from the CLI.
@Suite struct RulesEndToEndTests {
    let dir = TemporaryDirectory()

    static let referenceRules = ReferenceRules.text

    /// A file with two errors, on known lines and columns.
    static let brokenRules = """
    {
      // comments are allowed
      "rules": {
        ".read": "auth.uid = 'x'",
        "a": { ".write": "nosuchvar == 1" }
      }
    }
    """

    @Test func refusesToStartWithoutARulesFile() throws {
        let child = try HearthProcess(
            arguments: ["serve", "--port", "0", "--data-dir", dir.path, "--rules", dir.path + "/missing.json"],
            dataDirectory: dir.path)
        #expect(try child.waitForExit() == 1)
        #expect(child.log.contains("cannot read rules file"))
        #expect(!child.log.contains("listening on"))
    }

    @Test func refusesToStartOnAnInvalidRulesFileAndSaysWhere() throws {
        let rules = try HearthProcess.writeRules(Self.brokenRules, in: dir.path)
        let child = try HearthProcess(
            arguments: ["serve", "--port", "0", "--data-dir", dir.path, "--rules", rules], dataDirectory: dir.path)
        #expect(try child.waitForExit() == 1)
        #expect(child.log.contains("2 errors"))
        #expect(child.log.contains("rules.json:4:"))
        #expect(child.log.contains("/rules/.read"))
        #expect(child.log.contains("rules.json:5:"))
        #expect(child.log.contains("/rules/a/.write"))
        #expect(!child.log.contains("listening on"))
    }

    @Test func referenceRulesDenyTheUnauthenticated() throws {
        let server = try HearthProcess.serve(dataDirectory: dir.path, rules: Self.referenceRules)
        let base = server.baseURL
        let read = try curl("GET", base + "/users/alice/favorites.json")
        #expect(read.status == 401)
        #expect(read.body == #"{"error":"Permission denied"}"#)
        let write = try curl("PUT", base + "/users/alice/favorites/f1.json",
                             body: #"{"id":"f1","name":"Oslo","createdAt":1,"createdBy":"alice","latitude":1,"longitude":2}"#)
        #expect(write.status == 401)
        #expect(try curl("GET", base + "/.json").status == 401)
        #expect(try curl("GET", base + "/healthz").status == 200)
        server.signal(SIGTERM)
        #expect(try server.waitForExit() == 0)
    }

    @Test func sighupReloadsValidRulesAndKeepsOldOnesWhenInvalid() throws {
        let server = try HearthProcess.serve(dataDirectory: dir.path, rules: #"{"rules": {".read": true}}"#)
        let base = server.baseURL
        #expect(try curl("GET", base + "/x.json").status == 200)
        #expect(try curl("PUT", base + "/x.json", body: "1").status == 401)

        _ = try HearthProcess.writeRules(#"{"rules": {".read": true, ".write": true}}"#, in: dir.path)
        server.signal(SIGHUP)
        try server.waitForLog("rules reloaded", count: 1)
        #expect(try curl("PUT", base + "/x.json", body: "1").status == 200)

        _ = try HearthProcess.writeRules(#"{"rules": {".read": "bogus("}}"#, in: dir.path)
        server.signal(SIGHUP)
        try server.waitForLog("rules NOT reloaded", count: 1)
        #expect(try curl("PUT", base + "/x.json", body: "2").status == 200)
        #expect(try curl("GET", base + "/x.json").body == "2")
        server.signal(SIGTERM)
        #expect(try server.waitForExit() == 0)
    }

    @Test func rulesCheckReportsErrorsWithLocations() throws {
        let good = try HearthProcess.writeRules(Self.referenceRules, in: dir.path)
        let ok = try run(HearthProcess.binaryPath, ["rules", "check", good])
        #expect(ok.status == 0)
        let badPath = dir.path + "/bad.json"
        try Self.brokenRules.write(toFile: badPath, atomically: true, encoding: .utf8)
        let bad = try run(HearthProcess.binaryPath, ["rules", "check", badPath])
        #expect(bad.status == 1)
        #expect(bad.output.contains("bad.json:4:"))
        #expect(bad.output.contains("bad.json:5:"))
    }

    @Test func rulesTestRunsCasesAndEndsWithTheCounts() throws {
        let cases = """
        [
          {"id": "own-read", "rules": \(Self.referenceRules), "data": null,
           "auth": {"uid": "alice", "provider": "password", "token": {}},
           "op": "read", "path": "/users/alice/favorites", "expect": "allow"},
          {"id": "other-read", "rules": \(Self.referenceRules), "data": null,
           "auth": {"uid": "bob", "provider": "password", "token": {}},
           "op": "read", "path": "/users/alice/favorites", "expect": "deny"},
          {"id": "wrong-on-purpose", "rules": \(Self.referenceRules), "data": null, "auth": null,
           "op": "set", "path": "/users/alice/favorites/f1", "value": {"name": "x"}, "expect": "allow"}
        ]
        """
        let path = dir.path + "/cases.json"
        try cases.write(toFile: path, atomically: true, encoding: .utf8)
        let result = try run(HearthProcess.binaryPath, ["rules", "test", path])
        #expect(result.status == 1)
        let lines = result.output.split(separator: "\n")
        #expect(lines.last == "2 passed, 1 failed")
        #expect(lines.contains { $0.hasPrefix("FAIL wrong-on-purpose") })
        #expect(!lines.contains { $0.contains("own-read") })

        let explained = try run(HearthProcess.binaryPath, ["rules", "test", "--explain", path])
        #expect(explained.output.contains("ok own-read"))
        #expect(explained.output.contains("read of /users/alice/favorites allowed by /rules/users/$uid/favorites/.read"))
    }
}
