import Foundation
import Synchronization
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Triggers on two nodes of one PostgreSQL database: events written on either
/// node reach the receiver once each, in commit order (maxConcurrency 1: across
/// locations), from whichever node holds the
/// trigger's lease; when a node dies, the other goes on.
@Suite(.enabled(if: PostgresTests.enabled)) struct TriggersMultiNodeEndToEndTests {
    final class Receiver: Sendable {
        final class Log: Sendable { let events = Mutex<[(id: String, ref: String)]>([]) }
        let log: Log
        let listener: LoopbackListener
        var all: [(id: String, ref: String)] { log.events.withLock { $0 } }

        init() throws {
            let log = Log()
            self.log = log
            listener = try LoopbackListener { socket in
                guard let request = socket.readRequest() else { return }
                log.events.withLock { $0.append((request.header("ce-id") ?? "", request.header("ce-ref") ?? "")) }
                try? socket.respond(204)
            }
        }

        /// Waits (60 s safety net) until `count` distinct events arrived; their refs in
        /// first-arrival order, and whether any id came twice.
        func waitFor(_ count: Int) throws -> (refs: [String], duplicates: Bool) {
            let deadline = ContinuousClock.now + .seconds(60)
            while true {
                let all = self.all
                var seen = Set<String>()
                let first = all.filter { seen.insert($0.id).inserted }
                if first.count >= count { return (first.map(\.ref), first.count != all.count) }
                guard ContinuousClock.now < deadline else { throw LiveClientError("\(first.count) of \(count) events: \(all)") }
                Thread.sleep(forTimeInterval: 0.02)
            }
        }
    }

    @Test func eachEventOnceInCommitOrderAcrossNodesAndAfterANodeDies() throws {
        let receiver = try Receiver()
        defer { receiver.listener.stop() }
        let url = try PostgresCluster.shared().makeDatabase()
        let work = TemporaryDirectory()
        let triggers = work.path + "/triggers.json"
        try #"{"triggers": [{"name": "room", "event": "written", "ref": "/room/{id}", "url": "http://127.0.0.1:\#(receiver.listener.port)/", "retry": true, "timeoutSeconds": 5, "maxConcurrency": 1}]}"#
            .write(toFile: triggers, atomically: true, encoding: .utf8)
        let directories = [TemporaryDirectory(), TemporaryDirectory()]
        let nodes = try directories.map {
            try HearthProcess.serve(dataDirectory: $0.path, environment: ["HEARTH_STORE": url, "HEARTH_TRIGGERS": triggers])
        }
        var written: [String] = []
        for index in 0..<10 {
            let node = nodes[index % 2]
            #expect(try curl("PUT", node.baseURL + "/room/m\(index).json", body: "\(index)").status == 200)
            written.append("room/m\(index)")
        }
        let before = try receiver.waitFor(written.count)
        #expect(before.refs == written)
        #expect(!before.duplicates, "a healthy receiver got an event twice: \(receiver.all)")
        nodes[0].signal(SIGKILL)
        _ = try nodes[0].waitForExit()
        for index in 10..<15 {
            #expect(try curl("PUT", nodes[1].baseURL + "/room/m\(index).json", body: "\(index)").status == 200)
            written.append("room/m\(index)")
        }
        let after = try receiver.waitFor(written.count)
        #expect(after.refs == written)
        nodes[1].signal(SIGTERM)
        #expect(try nodes[1].waitForExit() == 0)
    }
}
