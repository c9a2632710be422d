import Dispatch
import Foundation
import HearthAccounts
import HearthAuth
import HearthHTTP
import HearthMail
import HearthSQLite
import HearthStore
import HearthTesting
import Synchronization
import Testing
@testable import HearthServer

/// The limits around email actions and custom-token signers, each crossed: mail
/// requests per address and per email (the sign-up limits), the mail queue refusing with
/// 503, the service-account file size, and RSA keys too small or too large to read.
@Suite struct EmailActionLimitsTests {
    final class Outbox: Sendable {
        let sent = Mutex<[MailMessage]>([])
        let arrived = DispatchSemaphore(value: 0)
    }

    static func harness(attempts: Int, outbox: Outbox, maxQueued: Int = Mailer.defaultMaxQueued,
                        hold: DispatchSemaphore? = nil) throws -> RouterHarness {
        var settings = AuthSettings()
        settings.signInAttemptsPerMinute = attempts
        let frozen = SQLiteTreeStore.systemMilliseconds()
        let mailer = Mailer(maxQueued: maxQueued, deliver: { message throws(MailError) in
            hold?.wait()
            outbox.sent.withLock { $0.append(message) }
        }, report: { _, _ in outbox.arrived.signal() })
        return try RouterHarness(settings: settings, clock: { frozen }, mailer: mailer)
    }

    static func send(_ h: RouterHarness, email: String, from address: String) async -> HTTPResponse {
        let request = HTTPRequest(method: "POST", target: "/v1/accounts:sendOobCode",
                                  body: Array(#"{"requestType":"PASSWORD_RESET","email":"\#(email)"}"#.utf8), remoteAddress: address)
        return await withCheckedContinuation { continuation in
            h.router.handle(request, responder: HTTPResponder { continuation.resume(returning: $0) })
        }
    }

    @Test func resetMailsAreLimitedPerEmailAndPerAddress() async throws {
        let outbox = Outbox()
        let h = try Self.harness(attempts: 2, outbox: outbox)
        _ = try h.auth.service.signUp(email: "lim@example.com", password: "secret1")
        // Per email: two from different addresses, the third refused.
        #expect(await Self.send(h, email: "lim@example.com", from: "10.0.0.1").status == 200)
        #expect(await Self.send(h, email: "lim@example.com", from: "10.0.0.2").status == 200)
        let third = await Self.send(h, email: "lim@example.com", from: "10.0.0.3")
        #expect(third.status == 429 && third.headers["Retry-After"] != nil)
        // Per address: two for different emails, the third refused.
        #expect(await Self.send(h, email: "x1@example.com", from: "10.0.0.9").status == 200)
        #expect(await Self.send(h, email: "x2@example.com", from: "10.0.0.9").status == 200)
        #expect(await Self.send(h, email: "x3@example.com", from: "10.0.0.9").status == 429)
        // Two mails went out, both to the account that exists, each with its own code.
        for _ in 0..<2 { #expect(outbox.arrived.wait(timeout: .now() + 30) == .success) }
        let sent = outbox.sent.withLock { $0 }
        #expect(sent.map(\.to) == ["lim@example.com", "lim@example.com"])
        #expect(Set(sent.map(\.body)).count == 2)
        #expect(sent.allSatisfy { $0.body.contains("https://app.example.com/action?mode=resetPassword&oobCode=") })
    }

    @Test func aFullMailQueueIsA503WithRetryAfter() async throws {
        let outbox = Outbox()
        let hold = DispatchSemaphore(value: 0)
        let h = try Self.harness(attempts: 100, outbox: outbox, maxQueued: 1, hold: hold)
        _ = try h.auth.service.signUp(email: "q@example.com", password: "secret1")
        #expect(await Self.send(h, email: "q@example.com", from: "10.0.1.1").status == 200)  // held by the sender
        let full = await Self.send(h, email: "q@example.com", from: "10.0.1.2")
        #expect(full.status == 503 && full.headers["Retry-After"] == "30")
        hold.signal()
        #expect(outbox.arrived.wait(timeout: .now() + 30) == .success)
    }

    @Test func serviceAccountFilesAndKeysOutsideTheLimitsAreRefused() throws {
        let dir = TemporaryDirectory()
        let big = dir.path + "/big.json"
        try Data(repeating: UInt8(ascii: " "), count: AuthContext.maxServiceAccountFileBytes + 1).write(to: URL(fileURLWithPath: big))
        #expect(throws: AuthContext.ServiceAccountFileError.self) { try AuthContext.loadServiceAccount(big) }
        let missing = dir.path + "/missing.json"
        #expect(throws: AuthContext.ServiceAccountFileError.self) { try AuthContext.loadServiceAccount(missing) }
        // A 1024-bit RSA key (public key of a test-only key pair) is below RS256Key.minimumBits.
        let small = """
            -----BEGIN PUBLIC KEY-----
            MIGfMA0GCSqGSIb3DQEBAQUAA4GNADCBiQKBgQDDtHvUGRBcwgnU8hs5sUFCqL5s
            DaRfukXyAaaegh/T56Xl8LPooO6rqttacvQIF42GFTwl14Px/cas9c2NjFv5aBIf
            uV2W6Izep8srJFRikuJ3WUQVlI74589hRenCMzcxFUD2EnkaUsf3hBa/hF5QNDn1
            SenLbFtUFsdfwCSN6QIDAQAB
            -----END PUBLIC KEY-----
            """
        #expect(throws: RS256Key.KeyError.tooSmall(1024)) { try RS256Key(pem: small) }
        #expect(throws: RS256Key.KeyError.unreadable) { try RS256Key(pem: String(repeating: "A", count: RS256Key.maxPEMBytes + 1)) }
    }
}
