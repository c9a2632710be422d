import Dispatch
import Synchronization
import Testing
@testable import HearthMail

/// The mail queue: bounded, retries temporary failures with doubling waits,
/// never retries permanent ones; SMTP URLs; the message's headers. No sleeps: the waits
/// between tries are injected and recorded.
@Suite struct MailerTests {
    static let message = MailMessage(to: "a@example.com", subject: "Hi", body: "text")

    final class Recorder: Sendable {
        let outcomes = Mutex<[Mailer.Outcome]>([])
        let pauses = Mutex<[Int]>([])
        let done = DispatchSemaphore(value: 0)
    }

    @Test func temporaryFailuresAreRetriedWithDoublingWaitsAndPermanentOnesAreNot() {
        let recorder = Recorder()
        let failures = Atomic<Int>(0)
        let mailer = Mailer(pause: { seconds in recorder.pauses.withLock { $0.append(seconds) } }, deliver: { message throws(MailError) in
            if message.subject == "permanent" { throw .permanent("550 no such user") }
            if failures.add(1, ordering: .relaxed).newValue <= 3 { throw .transient("451") }
        }, report: { _, outcome in
            recorder.outcomes.withLock { $0.append(outcome) }
            recorder.done.signal()
        })
        #expect(mailer.enqueue(Self.message))
        #expect(recorder.done.wait(timeout: .now() + 30) == .success)
        #expect(mailer.enqueue(MailMessage(to: "b@example.com", subject: "permanent", body: "")))
        #expect(recorder.done.wait(timeout: .now() + 30) == .success)
        #expect(recorder.outcomes.withLock { $0 } == [.sent(attempts: 4), .failed(.permanent("550 no such user"), attempts: 1)])
        #expect(recorder.pauses.withLock { $0 } == [1, 2, 4])
    }

    @Test func aMessageThatNeverGoesThroughStopsAfterMaxAttempts() {
        let recorder = Recorder()
        let mailer = Mailer(pause: { seconds in recorder.pauses.withLock { $0.append(seconds) } }, deliver: { _ throws(MailError) in
            throw .transient("connection refused")
        }, report: { _, outcome in
            recorder.outcomes.withLock { $0.append(outcome) }
            recorder.done.signal()
        })
        mailer.enqueue(Self.message)
        #expect(recorder.done.wait(timeout: .now() + 30) == .success)
        #expect(recorder.outcomes.withLock { $0 } == [.failed(.transient("connection refused"), attempts: Mailer.maxAttempts)])
        #expect(recorder.pauses.withLock { $0.count } == Mailer.maxAttempts - 1)
    }

    @Test func theQueueIsBounded() {
        let release = DispatchSemaphore(value: 0)
        let recorder = Recorder()
        let mailer = Mailer(maxQueued: 3, deliver: { _ throws(MailError) in release.wait() }, report: { _, _ in recorder.done.signal() })
        #expect((0..<3).allSatisfy { _ in mailer.enqueue(Self.message) })
        #expect(mailer.enqueue(Self.message) == false)  // the fourth is refused at once
        #expect(mailer.pending == 3)
        release.signal()
        #expect(recorder.done.wait(timeout: .now() + 30) == .success)
        #expect(mailer.enqueue(Self.message))  // room again
        for _ in 0..<3 { release.signal() }
        for _ in 0..<3 { #expect(recorder.done.wait(timeout: .now() + 30) == .success) }
    }

    @Test func smtpURLs() throws {
        let plain = try SMTPSettings(url: "smtp://127.0.0.1:2525", from: "h@example.com")
        #expect(plain.security == .plain && plain.host == "127.0.0.1" && plain.port == 2525 && plain.username == nil)
        let tls = try SMTPSettings(url: "smtp+starttls://us%40er:p%3Ass@mail.example.com", from: "h@example.com")
        #expect(tls.security == .startTLS && tls.port == 587 && tls.username == "us@er" && tls.password == "p:ss" && tls.host == "mail.example.com")
        let v6 = try SMTPSettings(url: "smtp://[::1]:25/", from: "h@example.com")
        #expect(v6.host == "::1" && v6.port == 25)
        #expect(throws: SMTPSettings.ParseError.scheme) { try SMTPSettings(url: "http://x", from: "h@example.com") }
        #expect(throws: SMTPSettings.ParseError.port) { try SMTPSettings(url: "smtp://x:70000", from: "h@example.com") }
        #expect(throws: SMTPSettings.ParseError.host) { try SMTPSettings(url: "smtp://:25", from: "h@example.com") }
        #expect(throws: SMTPSettings.ParseError.from) { try SMTPSettings(url: "smtp://x", from: "a@b\r\nBcc: c@d") }
    }

    @Test func theMessageIsDotStuffedAndHeadersCannotBeInjected() {
        let message = MailMessage(to: "a@example.com", subject: "Hi\r\nBcc: evil@example.com", body: "one\n.two\r\nthree")
        let text = String(decoding: message.rendered(from: "h@example.com", date: "Thu, 1 Jan 1970 00:00:00 +0000", messageID: "x@hearth"), as: UTF8.self)
        #expect(text.contains("Subject: HiBcc: evil@example.com\r\n"))
        #expect(!text.contains("\r\nBcc:"))
        #expect(text.hasSuffix("\r\n\r\none\r\n..two\r\nthree\r\n"))
        #expect(!MailMessage.isPlainAddress("a@b>\r\nRCPT TO:<c@d"))
        #expect(MailDate.rfc5322(milliseconds: 0) == "Thu, 1 Jan 1970 00:00:00 +0000")
        #expect(MailDate.rfc5322(milliseconds: 1_795_560_311_200) == "Tue, 24 Nov 2026 22:45:11 +0000")
    }
}
