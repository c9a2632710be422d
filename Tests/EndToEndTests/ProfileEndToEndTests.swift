import Foundation
import Testing

/// `hearth profile` against the spawned server while curl does a known mix: exact counts
/// in `--json`, with the admin token minted from the data directory; Ctrl-C ends the
/// window early and still prints the report; a refused token and bad options are clear
/// errors.
@Suite struct ProfileEndToEndTests {
    let dir = TemporaryDirectory()
    static let rules = #"""
    {"rules": {
      "users": {"$uid": {".read": true, ".write": "$uid != 'locked'"}},
      "items": {".read": true, ".write": true, ".indexOn": ["score"]}
    }}
    """#

    /// The environment a CLI child needs to reach the server's store (PostgreSQL runs).
    func storeEnvironment() throws -> [String: String] {
        try TestStore.postgresURL(for: dir.path).map { ["HEARTH_STORE": $0] } ?? [:]
    }

    static func count(_ report: [String: Any], _ kind: String, _ path: String) -> Int? {
        let rows = report["operations"] as? [[String: Any]] ?? []
        return rows.first { $0["kind"] as? String == kind && $0["path"] as? String == path }?["count"] as? Int
    }

    @Test func aKnownMixGivesExactCountsInJSON() throws {
        let server = try HearthProcess.serve(dataDirectory: dir.path, rules: Self.rules)
        let base = server.baseURL
        let profile = try HearthProcess(
            arguments: ["profile", "--url", base, "--duration", "600", "--json", "--data-dir", dir.path],
            dataDirectory: dir.path, environment: try storeEnvironment())
        try profile.waitForLog("Ctrl-C stops early", count: 1)
        for n in 1...3 { #expect(try curl("PUT", base + "/users/alice/n.json", body: "\(n)").status == 200) }
        for _ in 1...2 { #expect(try curl("GET", base + "/users/alice.json").status == 200) }
        #expect(try curl("PATCH", base + "/users/bob.json", body: #"{"city": "Oslo"}"#).status == 200)
        #expect(try curl("PUT", base + "/users/locked/n.json", body: "1").status == 401)
        #expect(try curl("GET", base + #"/items.json?orderBy=%22name%22&limitToFirst=1"#).status == 400)
        profile.signal(SIGINT)
        #expect(try profile.waitForExit() == 0, "\(profile.log)")
        let log = profile.log
        let start = try #require(log.firstIndex(of: "{"), "\(log)")
        let report = try #require(try JSONSerialization.jsonObject(with: Data(log[start...].utf8)) as? [String: Any], "\(log)")
        // `n` has no rules node of its own: the key past the rules is $other.
        #expect(Self.count(report, "write", "/users/$uid/$other") == 4)
        #expect(Self.count(report, "read", "/users/$uid") == 2)
        #expect(Self.count(report, "update", "/users/$uid") == 1)
        #expect(Self.count(report, "read", "/items") == 1)
        #expect((report["operations"] as? [Any])?.count == 4, "\(log)")
        let denials = report["denials"] as? [[String: Any]] ?? []
        #expect(denials.count == 1 && denials.first?["rule"] as? String == "/rules/users/$uid/.write"
                && denials.first?["path"] as? String == "/users/$uid/$other", "\(denials)")
        let unindexed = report["unindexedQueries"] as? [[String: Any]] ?? []
        #expect(unindexed.count == 1 && unindexed.first?["indexOn"] as? String == "name" && unindexed.first?["path"] as? String == "/items")
        #expect((report["node"] as? [String: Any])?["sharedEngine"] as? Bool == TestStore.usesPostgres)
    }

    @Test func tablesByDefaultAndClearErrors() throws {
        let server = try HearthProcess.serve(dataDirectory: dir.path, rules: Self.rules)
        let base = server.baseURL
        let profile = try HearthProcess(arguments: ["profile", "--url", base, "--duration", "600", "--data-dir", dir.path],
                                        dataDirectory: dir.path, environment: try storeEnvironment())
        try profile.waitForLog("Ctrl-C stops early", count: 1)
        #expect(try curl("PUT", base + "/users/alice/n.json", body: "1").status == 200)
        profile.signal(SIGINT)
        #expect(try profile.waitForExit() == 0, "\(profile.log)")
        for section in ["Speed (by operation and path)", "Bandwidth", "Unindexed queries", "Permission denials", "Most expensive rules",
                        "Slowest operations"] {
            #expect(profile.log.contains(section), "\(section): \(profile.log)")
        }
        #expect(profile.log.contains("  write      /users/$uid/$other  1 "), "\(profile.log)")
        let refused = try Spawn.run(HearthProcess.binaryPath, ["profile", "--url", base, "--duration", "5", "--token", "not-a-token"],
                                    input: nil, captureStderr: true)
        #expect(refused.status == 1 && refused.output.contains("Error: The server refused the token (401)"), "\(refused.output)")
        let unreachable = try Spawn.run(HearthProcess.binaryPath, ["profile", "--url", "http://127.0.0.1:1", "--duration", "5", "--token", "t"],
                                        input: nil, captureStderr: true)
        #expect(unreachable.status == 1 && unreachable.output.contains("Error: Cannot reach http://127.0.0.1:1"), "\(unreachable.output)")
        for bad in [["--url", "ftp://x", "--duration", "5"], ["--url", base, "--duration", "0"], ["--url", base, "--duration", "3601"]] {
            let result = try Spawn.run(HearthProcess.binaryPath, ["profile"] + bad + ["--token", "t"], input: nil, captureStderr: true)
            #expect(result.status == 64 && result.output.contains("Error: "), "\(bad): \(result.output)")
        }
    }
}
