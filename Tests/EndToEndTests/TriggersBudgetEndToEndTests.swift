import Foundation
import Testing

/// The byte budget of a trigger against the built `hearth serve`, on the test store: a
/// trigger on `/users/{uid}` whose receiver fails every event (retry false), a 1 MiB node
/// under it, then 200 writes of 1 to 3 bytes. Each event carries the node before and after
/// (2 MiB), so without the budget the outbox would keep about 400 MiB of dead letters;
/// with it, what the trigger keeps stays within its `maxStoredBytes`, and every write is
/// committed.
@Suite struct TriggersBudgetEndToEndTests {
    static let budget: Int64 = 8 << 20
    static let node = 1 << 20
    static let writes = 200

    @Test func smallWritesUnderALargeNodeStayWithinTheBudget() throws {
        let directory = TemporaryDirectory()
        let receiver = try TriggerReceiver(answers: Array(repeating: 500, count: Self.writes + 1))
        defer { receiver.stop() }
        let triggers = directory.path + "/triggers.json"
        try """
        {"triggers": [{"name": "users", "event": "written", "ref": "/users/{uid}", "url": "http://127.0.0.1:\(receiver.port)/users",
                       "retry": false, "maxStoredBytes": \(Self.budget)}]}
        """.write(toFile: triggers, atomically: true, encoding: .utf8)
        let server = try HearthProcess.serve(dataDirectory: directory.path, environment: ["HEARTH_TRIGGERS": triggers])
        let store = try TriggersOperatorEndToEndTests.storeArguments(directory.path)

        /// The trigger's stored bytes as the metrics show them (the outbox at scrape time).
        func storedBytes() throws -> Int64 {
            let metrics = try liveRequest(port: server.port, "GET", "/metrics").body
            let prefix = #"hearth_trigger_stored_bytes{namespace="(default)",trigger="users"} "#
            guard let line = metrics.split(separator: "\n").first(where: { $0.hasPrefix(prefix) }),
                  let value = Double(line.dropFirst(prefix.count)) else { return 0 }
            return Int64(value)
        }

        let big = "\"" + String(repeating: "x", count: Self.node) + "\""
        #expect(try liveRequest(port: server.port, "PUT", "/users/u1/blob.json", body: big).status == 200)
        var peak: Int64 = 0
        for index in 0..<Self.writes {
            let body = String(repeating: "7", count: 1 + index % 3)
            #expect(try liveRequest(port: server.port, "PUT", "/users/u1/n\(index % 7).json", body: body).status == 200, "write \(index)")
            if index % 10 == 9 { peak = max(peak, try storedBytes()) }
        }
        // Every event was attempted or dropped past the budget: nothing is pending, and what
        // is kept (dead letters) fits the budget.
        var row: [String] = []
        try waitUntil("the outbox settled within the budget") {
            row = TriggersOperatorEndToEndTests.lines(try runHearth(["triggers", "list", "--triggers", triggers] + store).output).first ?? []
            guard row.count == 13, row[4] == "0", let stored = row[7].split(separator: "/").first.flatMap({ Int64($0) }) else { return false }
            return stored <= Self.budget
        }
        #expect(row[7].hasSuffix("/\(Self.budget)"))
        let stored = try #require(row[7].split(separator: "/").first.flatMap { Int64($0) })
        let unbounded = Int64(Self.writes + 1) * 2 * Int64(Self.node)
        #expect(stored > 0 && stored <= Self.budget)
        #expect(peak < unbounded / 4, "the peak between checks: \(peak) of \(unbounded) unbounded")
        var metrics = ""
        try waitUntil("the counters") {
            metrics = try liveRequest(port: server.port, "GET", "/metrics").body
            return metrics.contains(#"hearth_trigger_dead_removed_total{namespace="(default)",trigger="users"}"#)
                && !metrics.contains(#"hearth_trigger_dead_removed_total{namespace="(default)",trigger="users"} 0"#)
        }
        // Every write committed: the node holds the blob and the seven small children.
        let value = try liveRequest(port: server.port, "GET", "/users/u1.json?shallow=true").body
        #expect((0..<7).allSatisfy { value.contains("\"n\($0)\"") } && value.contains("\"blob\""))
        let dataBytes = (FileManager.default.enumerator(atPath: directory.path)?.allObjects as? [String] ?? []).reduce(Int64(0)) { total, name in
            total + ((try? FileManager.default.attributesOfItem(atPath: directory.path + "/" + name)[.size] as? Int64) ?? 0)
        }
        print("trigger budget: \(Self.writes) writes, unbounded \(unbounded) B, peak seen \(peak) B, kept \(stored) B, budget \(Self.budget) B, data directory \(dataBytes) B, received \(receiver.received.count)")
        server.signal(SIGTERM)
        #expect(try server.waitForExit() == 0)
    }
}
