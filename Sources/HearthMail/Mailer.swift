import Dispatch
import HearthAuth
import HearthSystem
import Synchronization

/// Sends mail off the request path: a bounded queue, one sender, each message
/// tried `maxAttempts` times with doubling waits after a temporary failure (a refused
/// connection, a 4xx). A request that would overfill the queue is refused at once
/// (`enqueue` returns false), so a burst never holds memory or threads.
public final class Mailer: Sendable {
    /// Messages waiting at most; past it `enqueue` refuses.
    public static let defaultMaxQueued = 1_000
    /// Tries per message.
    public static let maxAttempts = 5
    /// The wait after the first failed try, seconds; doubled after each further one.
    public static let firstRetrySeconds = 1

    /// What became of one message (for the log and tests).
    public enum Outcome: Sendable, Equatable {
        case sent(attempts: Int)
        case failed(MailError, attempts: Int)
    }

    public let maxQueued: Int
    private let deliver: @Sendable (MailMessage) throws(MailError) -> Void
    private let report: @Sendable (MailMessage, Outcome) -> Void
    private let queue = DispatchQueue(label: "hearth.mail")
    private let queued = Atomic<Int>(0)
    /// Waits between tries; injected so tests need not wait.
    private let pause: @Sendable (Int) -> Void

    public init(maxQueued: Int = defaultMaxQueued,
                pause: @escaping @Sendable (Int) -> Void = { seconds in Mailer.sleep(seconds) },
                deliver: @escaping @Sendable (MailMessage) throws(MailError) -> Void,
                report: @escaping @Sendable (MailMessage, Outcome) -> Void) {
        self.maxQueued = maxQueued
        self.pause = pause
        self.deliver = deliver
        self.report = report
    }

    /// A mailer over SMTP with `settings`.
    public convenience init(settings: SMTPSettings, maxQueued: Int = defaultMaxQueued, clock: @escaping @Sendable () -> Int64,
                            report: @escaping @Sendable (MailMessage, Outcome) -> Void) {
        let client = SMTPClient(settings: settings)
        self.init(maxQueued: maxQueued, deliver: { message throws(MailError) in
            let now = clock()
            let id = (try? SecretToken.generate()) ?? String(now)
            try client.send(message, date: MailDate.rfc5322(milliseconds: now), messageID: "\(id)@hearth")
        }, report: report)
    }

    /// Messages accepted and not yet finished.
    public var pending: Int { queued.load(ordering: .relaxed) }

    /// Queues `message`; false (nothing queued) when `maxQueued` are waiting already.
    @discardableResult
    public func enqueue(_ message: MailMessage) -> Bool {
        while true {
            let current = queued.load(ordering: .relaxed)
            guard current < maxQueued else { return false }
            if queued.compareExchange(expected: current, desired: current + 1, ordering: .relaxed).exchanged { break }
        }
        queue.async {
            let outcome = self.attempt(message)
            self.queued.subtract(1, ordering: .relaxed)
            self.report(message, outcome)
        }
        return true
    }

    private func attempt(_ message: MailMessage) -> Outcome {
        var wait = Self.firstRetrySeconds
        for attempt in 1...Self.maxAttempts {
            do throws(MailError) {
                try deliver(message)
                return .sent(attempts: attempt)
            } catch {
                guard error.isTransient, attempt < Self.maxAttempts else { return .failed(error, attempts: attempt) }
                pause(wait)
                wait *= 2
            }
        }
        return .failed(.transient("unreachable"), attempts: Self.maxAttempts)
    }

    /// Blocks the mail queue's thread (the only one that waits here) for `seconds`.
    public static func sleep(_ seconds: Int) {
        let done = DispatchSemaphore(value: 0)
        _ = done.wait(timeout: .now() + .seconds(seconds))
    }
}

/// The `Date:` header (RFC 5322 §3.3), in UTC.
public enum MailDate {
    static let days = ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"]  // 1970-01-01 was a Thursday
    static let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]

    public static func rfc5322(milliseconds: Int64) -> String {
        let time = CivilTime(milliseconds: milliseconds)
        func two(_ value: Int64) -> String { value < 10 ? "0\(value)" : "\(value)" }
        let weekday = days[Int(((time.dayNumber % 7) + 7) % 7)]
        return "\(weekday), \(time.day) \(months[Int(time.month - 1)]) \(time.year) \(two(time.hour)):\(two(time.minute)):\(two(time.second)) +0000"
    }
}
