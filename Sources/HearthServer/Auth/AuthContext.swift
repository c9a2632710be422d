import Dispatch
import Foundation
import HearthMail
import HearthAccounts
import HearthAuth
import HearthHTTP
import HearthJSON

/// What the account endpoints share, built by the composition root.
struct AuthContext: Sendable {
    let service: AccountService
    let authenticator: Authenticator
    /// Bounded pool for scrypt (each hash takes ~32 MiB): a burst of sign-ins queues here
    /// instead of exhausting memory, and is refused with 429 past the backlog.
    let pool: HashingPool
    /// Non-hashing account work (store lookups, token signing), off the I/O queues.
    let work: DispatchQueue
    let perAddress: RateLimiter
    /// Sign-ups per email (sign-ins are throttled by `throttle`).
    let perAccount: RateLimiter
    /// Wrong passwords per (account, address) and per account.
    let throttle: SignInThrottle
    /// The email actions' sender and mail; nil without `smtpURL`.
    var mailer: Mailer? = nil
    var actionMail: EmailActionMail? = nil

    /// Hashing jobs running at once; each scrypt hash takes ~32 MiB and one core.
    static let hashingPoolWidth = 2
    /// Hashing jobs waiting at most; past it sign-ins get 429 at once.
    static let hashingBacklog = 256

    /// Why the mail settings cannot be used (the server does not start).
    struct MailSettingsError: Error, CustomStringConvertible {
        let description: String
    }

    /// This context with the email actions' mailer from `settings` (nothing without
    /// `smtpURL`). `report` hears what became of each mail.
    func withMail(_ settings: AuthSettings, clock: @escaping @Sendable () -> Int64,
                  report: @escaping @Sendable (MailMessage, Mailer.Outcome) -> Void) throws -> AuthContext {
        guard let url = settings.smtpURL, !url.isEmpty else { return self }
        guard let from = settings.mailFrom, !from.isEmpty else { throw MailSettingsError(description: "smtpURL needs mailFrom (HEARTH_MAIL_FROM)") }
        guard let base = settings.actionLinkBase, base.hasPrefix("https://") || base.hasPrefix("http://") else {
            throw MailSettingsError(description: "smtpURL needs actionLinkBase (HEARTH_ACTION_LINK_BASE), an http(s) URL")
        }
        let smtp: SMTPSettings
        do {
            smtp = try SMTPSettings(url: url, from: from, caFile: settings.smtpCAFile)
        } catch {
            throw MailSettingsError(description: error.description)
        }
        var copy = self
        copy.mailer = Mailer(settings: smtp, clock: clock, report: report)
        copy.actionMail = EmailActionMail(linkBase: base, appName: settings.projectID)
        return copy
    }

    /// Queues the mail of `kind` with `code` for `email`: nil when queued, else the error to answer.
    func sendActionMail(_ kind: AccountService.ActionKind, to email: String, code: String) -> AuthError? {
        guard let mailer, let actionMail else { return .emailNotConfigured }
        let message = MailMessage(to: email, subject: actionMail.subject(kind), body: actionMail.body(kind, email: email, code: code))
        return mailer.enqueue(message) ? nil : .mailQueueFull
    }

    /// A service-account file of `customTokenServiceAccounts` that cannot be used.
    struct ServiceAccountFileError: Error, CustomStringConvertible {
        let path: String
        let reason: String
        var description: String { "\(path): \(reason)" }
    }

    /// The largest service-account file read (they are ~2.3 KB).
    static let maxServiceAccountFileBytes = 64 * 1024

    static func loadServiceAccount(_ path: String) throws -> ServiceAccountKey {
        guard let handle = FileHandle(forReadingAtPath: path) else { throw ServiceAccountFileError(path: path, reason: "cannot be read") }
        defer { try? handle.close() }
        let data = (try? handle.read(upToCount: maxServiceAccountFileBytes + 1)) ?? nil
        guard let data, data.count <= maxServiceAccountFileBytes else {
            throw ServiceAccountFileError(path: path, reason: data == nil ? "cannot be read" : "larger than \(maxServiceAccountFileBytes) bytes")
        }
        do {
            return try ServiceAccountKey(json: Array(data))
        } catch {
            throw ServiceAccountFileError(path: path, reason: error.description)
        }
    }

    /// 429 with `Retry-After` when the address made too many attempts, or the account
    /// failed too often from this address (or, under distributed guessing, at all: see
    /// `SignInThrottle`). Call `signedIn` when the password was right.
    func limitSignIn(address: String, account: String?) -> AuthError? {
        if let wait = perAddress.attempt("addr:" + address) { return AuthError.tooManyAttempts.withRetry(wait) }
        if let account, let wait = throttle.attempt(account: account.lowercased(), address: address) {
            return AuthError.tooManyAttempts.withRetry(wait)
        }
        return nil
    }

    /// The sign-in of `account` from `address` was right: its failures are forgotten.
    func signedIn(account: String, address: String) {
        throttle.succeeded(account: account.lowercased(), address: address)
    }

    /// 429 with `Retry-After` when the address or the email made too many sign-ups.
    func limitSignUp(address: String, account: String?) -> AuthError? {
        if let wait = perAddress.attempt("addr:" + address) { return AuthError.tooManyAttempts.withRetry(wait) }
        if let account, let wait = perAccount.attempt("acct:" + account.lowercased()) { return AuthError.tooManyAttempts.withRetry(wait) }
        return nil
    }

    /// `GET /.well-known/jwks.json`: the public keys that verify ID tokens.
    func jwks() -> HTTPResponse {
        var response = JSONResponse.make(JWKS.document(Array(service.keys.verifyingKeys.values)), options: .defaults, render: false)
        response.headers.add("Cache-Control", "public, max-age=300")
        return response
    }
}
