import HearthHTTP
import HearthTesting
import Logging
import Synchronization
import Testing
@testable import HearthServer

/// An access line's fields, in key order, the same whether they go through swift-log or
/// straight to a sink (`AccessLogSink`, which `hearth serve` uses).
@Suite struct AccessLogLineTests {
    static func record(peer: String = "127.0.0.1", isStream: Bool = false) -> HTTPAccessRecord {
        HTTPAccessRecord(method: "POST", path: "/users/u1/favorites.json", status: 200, bytes: 31,
                         durationNanoseconds: 1_234_567, requestID: "r-1", client: "203.0.113.9", peer: peer,
                         isStream: isStream)
    }

    @Test func fieldsComeInKeyOrderWithPeerAndStreamOnlyWhenTheyTellSomething() {
        let plain = AccessLog.line(Self.record(peer: "203.0.113.9"))
        #expect(plain.message == "POST /users/u1/favorites.json 200")
        #expect(plain.fields.map(\.key) == ["bytes", "client", "log", "method", "ms", "path", "request_id", "status"])
        #expect(plain.fields.map(\.value) == ["31", "203.0.113.9", "access", "POST", "1.23", "/users/u1/favorites.json", "r-1", "200"])

        let proxied = AccessLog.line(Self.record(peer: "127.0.0.1", isStream: true))
        let keys = proxied.fields.map(\.key)
        #expect(keys == ["bytes", "client", "log", "method", "ms", "path", "peer", "request_id", "status", "stream"])
        #expect(keys == keys.sorted())
        #expect(proxied.fields.first { $0.key == "peer" }?.value == "127.0.0.1")

        var tagged = Self.record(peer: "203.0.113.9")
        tagged.tag = "env-a"
        let named = AccessLog.line(tagged)
        #expect(named.fields.map(\.key) == ["bytes", "client", "log", "method", "ms", "ns", "path", "request_id", "status"])
        #expect(named.fields.first { $0.key == "ns" }?.value == "env-a")
    }

    @Test func aSinkGetsTheLineInsteadOfTheLoggerAndTheLoggerGetsTheSameFields() {
        let logs = CapturedLogs()
        let logger = Logger(label: "t", factory: logs.handler)
        let sunk = Mutex<[AccessLogLine]>([])
        AccessLog(logger: logger, sink: { line in sunk.withLock { $0.append(line) } }).record(Self.record())
        #expect(logs.access.isEmpty)
        let line = sunk.withLock { $0 }
        #expect(line == [AccessLog.line(Self.record())])

        AccessLog(logger: logger).record(Self.record())
        let logged = logs.access
        #expect(logged.count == 1)
        #expect(logged.first == Dictionary(uniqueKeysWithValues: AccessLog.line(Self.record()).fields.map { ($0.key, $0.value) }))
    }
}
