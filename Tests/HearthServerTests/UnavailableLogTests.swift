import HearthTesting
import Logging
import Synchronization
import Testing
@testable import HearthServer

/// The warning for requests answered 503 for an unavailable store: its cause, then at
/// most one line per `UnavailableLog.intervalMilliseconds`, counting the answers since.
@Suite struct UnavailableLogTests {
    @Test func theCauseIsLoggedAtOnceThenOncePerIntervalWithACount() {
        let logs = CapturedLogs()
        let now = Mutex<Int64>(0)
        let log = UnavailableLog(logger: Logger(label: "test", factory: logs.handler(label:)), clock: { now.withLock { $0 } })
        log.refused("a write", cause: "no answer within 5000 ms")
        for _ in 0..<5 { log.refused("a read", cause: "closed") }
        now.withLock { $0 = UnavailableLog.intervalMilliseconds - 1 }
        log.refused("a read", cause: "closed")
        #expect(logs.lines.withLock { $0.map(\.message) } == ["a write was answered 503, the store being unavailable: no answer within 5000 ms"])
        now.withLock { $0 = UnavailableLog.intervalMilliseconds }
        log.refused("a write", cause: "locked")
        #expect(logs.lines.withLock { $0.map(\.message) }.last
                == "a write was answered 503, the store being unavailable: locked (7 such answers since the last line)")
        #expect(logs.lines.withLock { $0.count } == 2)
    }

    /// A write whose COMMIT was sent before the store was lost (and could not be asked
    /// after) is counted with the others, and its line says that it may have been written.
    @Test func aWriteWhoseOutcomeIsUnknownIsLoggedAsSuch() {
        let logs = CapturedLogs()
        let now = Mutex<Int64>(0)
        let log = UnavailableLog(logger: Logger(label: "test", factory: logs.handler(label:)), clock: { now.withLock { $0 } })
        log.refused("a write", cause: "no answer within 5000 ms", outcomeUnknown: true)
        log.refused("a read", cause: "closed")
        #expect(logs.lines.withLock { $0.map(\.message) } == [
            "a write was answered 503, the store being unavailable: no answer within 5000 ms; whether it was written is unknown, as the store was lost after its COMMIT was sent",
        ])
    }
}
