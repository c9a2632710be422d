import Foundation
import HearthHTTPClient
import HearthDatabase
import HearthJSON
import HearthSQLite
import HearthStore
import HearthSystem
import HearthTesting
import Logging
import Synchronization
import Testing
@testable import HearthTriggers

/// The retry policy (which failures back off, which retry at once) and the stuck watch,
/// from literals; then both in a running delivery.
@Suite struct TriggerRetryTests {
    static let reset = SystemError(errno: ECONNRESET, call: "recv")
    static let unreachable = SystemError(errno: EHOSTUNREACH, call: "connect")

    @Test func failuresThatReachedNoFunctionAreClassifiedByType() {
        for error: HTTPClientError in [.connection(.refused), .connection(.unresolved), .connection(.system(Self.reset)),
                                       .connection(.system(Self.unreachable))] {
            #expect(AttemptFailure(error) == .unreached(error.description), "\(error)")
        }
        for error: HTTPClientError in [.connection(.timeout), .timeout, .connection(.tls("certificate")), .badResponse("not HTTP"),
                                       .badResponse("the connection broke during the answer: reset"), .responseTooLarge(limit: 10),
                                       .invalidURL("x"), .invalidRequest("x")] {
            #expect(AttemptFailure(error) == .answered(error.description), "\(error)")
        }
        #expect(AttemptFailure(status: 500) == .answered("HTTP 500"))
        // The text plays no part: an answer whose reason reads like a refusal is an answer.
        #expect(AttemptFailure(.badResponse("connection refused")) == .answered("bad response: connection refused"))
    }

    @Test func anUnreachedReceiverIsRetriedAtTheShortIntervalWhateverTheAttempts() {
        #expect(TriggerLimits.unreachedRetryMilliseconds <= 2000)
        for attempts in [0, 1, 5, 30, 10_000] {
            let delay = AttemptFailure.unreached("connection refused").retryDelay(attempts: attempts, base: 1000, cap: 600_000)
            #expect(delay == TriggerLimits.unreachedRetryMilliseconds)
        }
    }

    @Test func anAnsweredFailureBacksOffExponentiallyUpToTheCap() {
        let failure = AttemptFailure.answered("HTTP 500")
        for (attempts, ceiling) in [(0, Int64(1000)), (1, 2000), (4, 16_000), (9, 512_000), (10, 600_000), (1000, 600_000)] {
            for _ in 0..<20 {
                let delay = failure.retryDelay(attempts: attempts, base: 1000, cap: 600_000)
                #expect(delay >= ceiling / 2 && delay <= ceiling, "\(attempts): \(delay)")
            }
        }
        // Past the short interval from the fifth attempt on: the two never meet.
        #expect(failure.retryDelay(attempts: 4, base: 1000, cap: 600_000) > TriggerLimits.unreachedRetryMilliseconds * 2)
    }

    @Test func aFailureTextIsCutAtItsLimit() {
        let long = AttemptFailure.answered(String(repeating: "x", count: TriggerLimits.maxLastErrorLength + 1))
        #expect(long.text.count == TriggerLimits.maxLastErrorLength && long.text.hasSuffix("…"))
        let fits = String(repeating: "y", count: TriggerLimits.maxLastErrorLength)
        #expect(AttemptFailure.unreached(fits).text == fits)
    }

    static func record(id: Int64, attempts: Int, lastError: String?, at: Int64) -> OutboxRecord {
        OutboxRecord(id: id, trigger: "t", seq: id, at: at, payload: Array(#"{"ref":"a/\#(id)"}"#.utf8), attempts: attempts, lastError: lastError)
    }

    @Test func stuckStartsAtTheAttemptLimitAndEndsOnceTheOldestIsNotFailing() {
        let now: Int64 = 10_000_000
        var watch = StuckWatch()
        #expect(watch.observe(nil, now: now) == nil && !watch.isStuck)
        let limit = TriggerLimits.stuckAfterAttempts
        #expect(watch.observe(Self.record(id: 1, attempts: limit - 1, lastError: "HTTP 500", at: now - 1000), now: now) == nil)
        let stuck = Self.record(id: 1, attempts: limit, lastError: "HTTP 500", at: now - 1000)
        #expect(watch.observe(stuck, now: now) == .started(stuck) && watch.stuckOn == 1)
        // Once: more failures, or the next event failing too, change nothing.
        #expect(watch.observe(Self.record(id: 1, attempts: limit + 3, lastError: "HTTP 500", at: now - 1000), now: now) == nil)
        #expect(watch.observe(Self.record(id: 2, attempts: limit, lastError: "HTTP 500", at: now - 900), now: now) == nil)
        #expect(watch.stuckOn == 1)
        // The next in line has not failed: no longer stuck, once.
        #expect(watch.observe(Self.record(id: 3, attempts: 0, lastError: nil, at: now - 800), now: now) == .ended(stuckOn: 1))
        #expect(watch.observe(Self.record(id: 3, attempts: 0, lastError: nil, at: now - 800), now: now) == nil)
        // Stuck again, then nothing pending (parked, delivered): ended.
        #expect(watch.observe(stuck, now: now) == .started(stuck))
        #expect(watch.observe(nil, now: now) == .ended(stuckOn: 1) && !watch.isStuck)
    }

    @Test func stuckStartsAtTheAgeLimitOnlyAfterAFailure() {
        let now: Int64 = 10_000_000
        let limit = TriggerLimits.stuckAfterSeconds * 1000
        var watch = StuckWatch()
        // Refused attempts are not counted, so age is what shows an unreached receiver.
        #expect(watch.observe(Self.record(id: 7, attempts: 0, lastError: "connection refused", at: now - limit + 1), now: now) == nil)
        let old = Self.record(id: 7, attempts: 0, lastError: "connection refused", at: now - limit)
        #expect(watch.observe(old, now: now) == .started(old))
        #expect(watch.observe(nil, now: now) == .ended(stuckOn: 7))
        // A backlog draining without failures is never stuck, however old.
        #expect(watch.observe(Self.record(id: 8, attempts: 0, lastError: nil, at: 0), now: now) == nil)
    }
}

/// The retry policy and the stuck logs in a running delivery over a real SQLite outbox, to
/// a real listener on port 0 (or a port nobody listens on).
@Suite struct TriggerRetryDeliveryTests {
    let directory = TemporaryDirectory()
    let store: SQLiteTreeStore
    let logs = CapturedLogs()

    init() throws {
        store = try SQLiteTreeStore(directory: directory.path, onCommit: { _, _ in })
    }

    /// Backoff from 20 ms, capped at `backoffCap`.
    func delivery(port: Int, backoffCap: Int64 = TriggerLimits.backoffCapMilliseconds) -> TriggerDelivery {
        let logs = self.logs
        let delivery = TriggerDelivery(outbox: store.triggerOutbox, origin: EventOrigin(instance: "hearth", databaseHost: "127.0.0.1:9"),
                                       logger: Logger(label: "test") { logs.handler(label: $0) }, clock: WallClock.milliseconds,
                                       backoffBaseMilliseconds: 20, backoffCapMilliseconds: backoffCap)
        delivery.replace([TriggerDefinition(name: "t", kind: .written, ref: try! RefPattern("/a/{id}"),
                                            url: try! HTTPURL("http://127.0.0.1:\(port)/t"), retry: true)])
        delivery.start(databaseHost: "127.0.0.1:9")
        return delivery
    }

    /// Writes `/a/<id>` for each id, with the delivery's effects: one event of `t` each.
    func record(_ ids: [String], _ delivery: TriggerDelivery) throws {
        for id in ids {
            try store.writeSync(.set(WriteEntry(path: try DataPath(string: "/a/\(id)"), value: 1)), check: nil,
                                effects: delivery.effects(for: Caller(auth: .null, isAdmin: true)))
        }
    }

    func count(_ text: String) -> Int { logs.lines.withLock { $0.filter { $0.message.contains(text) }.count } }

    /// Nobody listens: attempts go on at the short interval, none counted (the backoff of
    /// a base of 20 ms would otherwise have grown past 10 s by the twelfth).
    @Test func refusedAttemptsAreNotCountedAndDoNotBackOff() async throws {
        let refusing = try RefusingPort()
        defer { refusing.release() }  // held (and refusing) to the end
        let delivery = delivery(port: refusing.port)
        defer { delivery.close() }
        try record(["x"], delivery)
        try await waitUntil("twelve refused attempts") { (delivery.status().first?.status.failedAttempts ?? 0) >= 12 }
        let oldest = try #require(try store.triggerOutbox.oldestPending(trigger: "t")["t"])
        #expect(oldest.attempts == 0 && oldest.lastError == "connection refused")
        #expect(delivery.status().first?.status.lastError == "connection refused")
        // The first failure of the event is logged, not every attempt.
        #expect(count("delivery to") == 1)
    }

    /// Answered 500 until switched: the stuck log once when the oldest event has failed
    /// `stuckAfterAttempts` times, the end of it once after it is delivered.
    @Test func stuckAndUnstuckAreLoggedOnceEach() async throws {
        let status = Mutex(500)
        let listener = try LoopbackListener { socket in
            guard socket.readRequest() != nil else { return }
            try? socket.respond(status.withLock { $0 })
        }
        defer { listener.stop() }
        // Capped at 200 ms: on a busy machine many attempts may fail before this test sees
        // the stuck log, and the attempt after the switch must still come soon.
        let delivery = delivery(port: listener.port, backoffCap: 200)
        defer { delivery.close() }
        try record(["x", "y"], delivery)
        try await waitUntil("the stuck log") { count("is stuck") == 1 }
        let line = logs.lines.withLock { $0.first { $0.message.contains("is stuck") }?.message } ?? ""
        let oldest = try #require(try store.triggerOutbox.oldestPending(trigger: "t")["t"])
        #expect(line.contains("event \(oldest.id) (/a/x)") && line.contains("HTTP 500") && line.contains("hearth triggers park \(oldest.id)"))
        #expect(oldest.attempts >= TriggerLimits.stuckAfterAttempts)
        status.withLock { $0 = 200 }
        try await waitUntil("the end of it") { count("no longer stuck") == 1 }
        try await waitUntil("both delivered") { delivery.status().first?.status.delivered == 2 }
        #expect(count("is stuck") == 1 && count("no longer stuck") == 1)
    }
}
