import Foundation
import Testing

/// The Firebase wire protocol on `/.ws`, spoken by our own client
/// (`Python/wire_client.py`, the `websockets` package) against the built binary, under the
/// reference rules plus an open `/open` subtree. Each mode checks every answer itself and
/// prints `ok <check>`; the test requires a clean exit and the checks it expects.
@Suite struct WireProtocolEndToEndTests {
    let dir = TemporaryDirectory()

    static let rules = ReferenceRules.withOpenSubtree

    func run(_ mode: String, script: String = "wire_client.py", environment: [String: String] = [:], expecting checks: [String]) throws {
        let python = try pythonInterpreter()
        let server = try HearthProcess.serve(dataDirectory: dir.path, rules: Self.rules, environment: environment)
        let result = try runPythonDriver(python, script: script, arguments: [mode, String(server.port)], environment: [:])
        #expect(result.status == 0, "\(mode) failed:\n\(result.stdout)\n\(result.stderr)\n\(server.log.suffix(3000))")
        let passed = Set(result.stdout.split(separator: "\n").filter { $0.hasPrefix("ok ") }.map { String($0.dropFirst(3)) })
        for check in checks { #expect(passed.contains(check), "\(mode): '\(check)' did not pass\n\(result.stdout)") }
        #expect(result.stdout.hasSuffix("done\n"))
    }

    @Test func handshakePingStatsKeepAliveAndBadInput() throws {
        try run("handshake", expecting: ["handshake first", "handshake h echoes the Host", "pong carries d", "stats answered ok",
                                         "a get of .info is answered ok with null",
                                         "unknown action answered invalid_action", "request number 0 answered",
                                         "a malformed message does not end the connection"])
    }

    @Test func listensWritesMergesGetsAndRules() throws {
        try run("listen_write", expecting: ["the listen's data arrives before its ok", "the writer's push arrives before its ok",
                                            "server timestamp resolved", "merge pushed as m with relative paths", "get returns the value",
                                            "validate failure refused", "a refused write pushes nothing",
                                            "listen on another user's data refused", "no push after unlisten"])
    }

    @Test func queriesWithTagsAndAMovingWindow() throws {
        try run("query", expecting: ["limitToLast(2) window", "a child enters and another leaves the window",
                                     "no_index warning for an unindexed child", "get with equalTo"])
    }

    /// A compound hash with its cuts all under one child (compound_client.py): 1,024 get one
    /// correct range merge, 1,025 the whole value; another client's push still arrives.
    @Test func compoundHashCutsUnderOneChildAreBounded() throws {
        try run("cuts", script: "compound_client.py",
                expecting: ["1024 cuts under one child get 1025 ranges", "the ranges merged give the value",
                            "1025 cuts (past the bound) get the whole value",
                            "another client's push arrives after a listen with 1025 cuts"])
    }

    @Test func transactionsFromTwoConnectionsCountExactly() throws {
        try run("transaction", expecting: ["counter is exactly 50", "a wrong hash is datastale",
                                           "a hash beginning with W/ matches its value"])
    }

    @Test func onDisconnectRunsWhenTheConnectionEnds() throws {
        try run("ondisconnect", expecting: ["onDisconnect checked against the rules when registered", "server value resolved when it ran",
                                            "the cancelled operation did not run"])
    }

    @Test func aReconnectWithLsEndsTheOldSessionFirst() throws {
        try run("reconnect", expecting: ["the old session's onDisconnect ran before the new session's first answer",
                                         "the old session was closed"])
    }

    /// Beyond Firebase: onDisconnect operations are persisted, so those of connections open
    /// when Hearth is killed run when it starts again (presence never sticks at online).
    @Test func onDisconnectOperationsSurviveAServerKill() throws {
        let python = try pythonInterpreter()
        let server = try HearthProcess.serve(dataDirectory: dir.path, rules: Self.rules)
        let result = try runPythonDriver(python, script: "wire_client.py",
                                         arguments: ["crash", String(server.port), String(server.process.processIdentifier)], environment: [:])
        #expect(result.status == 0, "crash mode failed:\n\(result.stdout)\n\(result.stderr)")
        #expect(result.stdout.contains("ok and cancelled"))
        _ = try server.waitForExit()
        let restarted = try HearthProcess.serve(dataDirectory: dir.path, rules: Self.rules)
        // SQLite runs them at start, before it listens. On PostgreSQL the restarted server
        // is a new node: it runs them once the killed node's lease has expired.
        let ranLine = TestStore.usesPostgres ? "ran 2 onDisconnect operations of connections whose node stopped"
                                             : "ran 2 onDisconnect operations left by connections open when Hearth last stopped"
        try restarted.waitForLog(ranLine, count: 1)
        let presence = try curl("GET", restarted.baseURL + "/open/presence/me.json")
        let value = json(presence.body) as? [String: Any]
        let ranAt = (value?["at"] as? NSNumber)?.int64Value ?? 0
        #expect(value?["state"] as? String == "offline", "\(presence.body)")
        #expect(ranAt > 1_600_000_000_000, "\(presence.body)")
        #expect(value?["cancelled"] == nil, "\(presence.body)")
        // They ran once: a server stopped cleanly leaves none behind, so the next start
        // runs nothing and the time they wrote stays.
        restarted.signal(SIGTERM)
        #expect(try restarted.waitForExit() == 0)
        let again = try HearthProcess.serve(dataDirectory: dir.path, rules: Self.rules)
        #expect(!again.log.contains("onDisconnect operations"))
        let after = json(try curl("GET", again.baseURL + "/open/presence/me.json").body) as? [String: Any]
        #expect(after?["state"] as? String == "offline")
        #expect((after?["at"] as? NSNumber)?.int64Value == ranAt)
    }

    /// Access over time, as for SSE streams: a deleted account's listens get `ac`.
    @Test func aRevokedAccountGetsAuthRevoked() throws {
        try run("revoke", environment: ["HEARTH_STREAM_REVOCATION_CHECK_SECONDS": "0.2"],
                expecting: ["ac pushed when the account is gone", "signed out after ac"])
    }

    /// A rules reload (SIGHUP) re-decides every listen: those that lost access get `c`.
    @Test func aRulesReloadRevokesListensThatLostAccess() throws {
        let python = try pythonInterpreter()
        let server = try HearthProcess.serve(dataDirectory: dir.path, rules: Self.rules)
        let result = try runPythonDriver(python, script: "wire_client.py", arguments: [
            "reload", String(server.port), String(server.process.processIdentifier), dir.path + "/rules.json"], environment: [:])
        #expect(result.status == 0, "reload failed:\n\(result.stdout)\n\(result.stderr)\n\(server.log.suffix(2000))")
        #expect(result.stdout.contains("ok c pushed for the listen that lost access"))
        #expect(result.stdout.contains("ok the other listen still gets pushes"))
    }

    @Test func onlyConfiguredNamespacesAreServed() throws {
        try run("namespace", environment: ["HEARTH_NAMESPACES": "demo"],
                expecting: ["an unknown namespace gets shutdown", "and the connection ends", "the configured namespace gets the handshake"])
    }

    @Test func chunkedMessagesAreJoined() throws {
        try run("chunked", expecting: ["the chunked value round-trips", "the long answer came in chunks",
                                       "multi-byte characters survive the chunking"])
    }

    @Test func authRefusalsAndSignOut() throws {
        try run("auth", expecting: ["a bad token is refused", "authenticated listen", "listen revoked after unauth", "signed out: refused"])
    }

    /// Every per-connection limit (`WireSessionLimits`, set small here) crossed by one.
    @Test func perConnectionLimitsAreCrossed() throws {
        try run("limits", environment: [
            "HEARTH_WIRE_MAX_LISTENS": "2", "HEARTH_WIRE_MAX_ON_DISCONNECT": "2", "HEARTH_WIRE_MAX_BAD_MESSAGES": "3",
            "HEARTH_WIRE_MAX_AUTH_FAILURES": "2", "HEARTH_WIRE_MAX_PENDING_REQUESTS": "4",
        ], expecting: ["a third listen is refused", "after an unlisten it fits", "a third onDisconnect is refused",
                       "the fourth bad message closes with 1008", "the third failed auth closes with 1008",
                       "200 requests past the pending bound of 4 all answered", "in order, on a connection still open"])
    }

    /// Bounds and refusals against the binary: refusals answered in words (a message nested
    /// too deep, a version other than 13, a chunk count no message fits); incomplete
    /// messages across sockets past the address's share (settings as in WireLiveTests); one
    /// connection's listens leaving its address room.
    @Test func refusalsIncompleteMessagesAndNeighbours() throws {
        try run("refusals", expecting: ["a message nested too deep is answered", "version 8 gets 426 Upgrade Required",
                                        "a chunk count past the message limit closes with 1009 at once", "the close reason says why in words"])
        try run("partials", environment: ["HEARTH_MAX_INCOMPLETE_BYTES_PER_ADDRESS": "1048576"],
                expecting: ["the third partial message passes the share: 1008", "wire chunks held past the share: 1008",
                            "a small request from the same address is served meanwhile", "both refusals in /metrics"])
        try run("neighbours", environment: ["HEARTH_MAX_STREAMS_PER_ADDRESS": "8"],
                expecting: ["one connection stops at a quarter of the address's streams", "a neighbour on the same address listens",
                            "and opens an SSE stream"])
    }

    /// A plain GET of /.ws (no upgrade) is a clear 400, not a read of data at "/.ws".
    @Test func aPlainGetIsRefused() throws {
        let server = try HearthProcess.serve(dataDirectory: dir.path)
        let answer = try curl("GET", server.baseURL + "/.ws?v=5&ns=demo")
        #expect(answer.status == 400)
        #expect(answer.body.contains("Expected a WebSocket upgrade"))
    }
}
