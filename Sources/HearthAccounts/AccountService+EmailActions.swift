import HearthAuth
import HearthJSON
import HearthStore

/// Email actions: password reset and email verification codes, single
/// use and expiring, stored hashed (`SecretToken`: 256 random bits, so a plain SHA-256).
extension AccountService {
    public enum ActionKind: String, Sendable {
        case passwordReset = "PASSWORD_RESET"
        case verifyEmail = "VERIFY_EMAIL"

        /// How long a code works, seconds (Firebase: an hour for a reset, three days for a
        /// verification).
        public var lifetimeSeconds: Int64 {
            switch self {
            case .passwordReset: return 3600
            case .verifyEmail: return 3 * 86_400
            }
        }

        /// The `mode` of the action link, as Firebase's links name it.
        public var mode: String {
            switch self {
            case .passwordReset: return "resetPassword"
            case .verifyEmail: return "verifyEmail"
            }
        }
    }

    /// The account an email action of `kind` is for: the one with `email` for a reset (nil
    /// when there is none), the signed-in user of `idToken` for a verification (who must
    /// have an email address).
    public func actionRecipient(_ kind: ActionKind, email: String?, idToken: String?) throws(AuthError) -> UserRecord? {
        switch kind {
        case .passwordReset:
            guard let email, !email.isEmpty else { throw .missingEmail }
            return try wrap { try accounts.user(email: email.lowercased()) }
        case .verifyEmail:
            let signedIn = try user(forIDToken: idToken)
            guard signedIn.email != nil else { throw AuthError("INVALID_EMAIL", detail: "the account has no email address") }
            return signedIn
        }
    }

    /// A new code of `kind` for `user` (who must have an email).
    public func createActionCode(_ kind: ActionKind, for user: UserRecord) throws(AuthError) -> String {
        guard let email = user.email else { throw .missingEmail }
        let code = try wrap { try SecretToken.generate() }
        let now = clock()
        try wrap {
            try accounts.addActionCode(ActionCode(hash: SecretToken.hash(code), uid: user.uid, kind: kind.rawValue, email: email,
                                                  createdAt: now, expiresAt: now + kind.lifetimeSeconds * 1000))
        }
        return code
    }

    /// The code's record if it is a valid, unused, unexpired code of `kind`; with `consume`
    /// it cannot be used again.
    func actionCode(_ code: String?, _ kind: ActionKind, consume: Bool) throws(AuthError) -> ActionCode {
        guard let code, !code.isEmpty else { throw AuthError("MISSING_OOB_CODE") }
        guard SecretToken.isWellFormed(code) else { throw AuthError("INVALID_OOB_CODE") }
        switch try wrap({ try accounts.actionCode(hash: SecretToken.hash(code), kind: kind.rawValue, at: clock(), consume: consume) }) {
        case .valid(let record): return record
        case .expired: throw AuthError("EXPIRED_OOB_CODE")
        case .invalid: throw AuthError("INVALID_OOB_CODE")
        }
    }

    /// `accounts:resetPassword`: with `newPassword`, uses the code and sets the password;
    /// without, only checks the code. Returns the email. The code proves the address
    /// (`proven`): every earlier session ends, and links made while it was unverified go.
    public func resetPassword(code: String?, newPassword: String?) throws(AuthError) -> String {
        try completePasswordReset(code: code, newPassword: newPassword).email
    }

    /// `resetPassword`, with the user whose password was set (nil when only checked).
    public func completePasswordReset(code: String?, newPassword: String?) throws(AuthError) -> (email: String, user: UserRecord?) {
        guard let newPassword else { return (try actionCode(code, .passwordReset, consume: false).email, nil) }
        _ = try validate(password: newPassword)
        let record = try actionCode(code, .passwordReset, consume: true)
        return (record.email, try prove(record, newPassword: newPassword))
    }

    /// `accounts:update` with a `VERIFY_EMAIL` code: the address it was sent to is marked
    /// verified (if it is still the account's). The code proves the address (`proven`):
    /// every earlier session ends, and links made while it was unverified go.
    public func verifyEmail(code: String?) throws(AuthError) -> UserRecord {
        let record = try actionCode(code, .verifyEmail, consume: true)
        return try prove(record, newPassword: nil)
    }
}

/// The mail of an email action: Firebase-style link and a plain-text template.
public struct EmailActionMail: Sendable {
    /// Where the links point (`actionLinkBase`); the app's page reads `mode` and `oobCode`.
    public var linkBase: String
    /// The name in the mails (the project id by default).
    public var appName: String

    public init(linkBase: String, appName: String) {
        self.linkBase = linkBase
        self.appName = appName
    }

    public func link(_ kind: AccountService.ActionKind, code: String) -> String {
        let separator = linkBase.contains("?") ? "&" : "?"
        return "\(linkBase)\(separator)mode=\(kind.mode)&oobCode=\(code)&lang=en"
    }

    public func subject(_ kind: AccountService.ActionKind) -> String {
        switch kind {
        case .passwordReset: return "Reset your password for \(appName)"
        case .verifyEmail: return "Verify your email for \(appName)"
        }
    }

    public func body(_ kind: AccountService.ActionKind, email: String, code: String) -> String {
        let link = self.link(kind, code: code)
        switch kind {
        case .passwordReset:
            return """
                Hello,

                Follow this link to reset the \(appName) password of your \(email) account:

                \(link)

                The link works once, for an hour. If you did not ask to reset your password, ignore this mail.

                \(appName)
                """
        case .verifyEmail:
            return """
                Hello,

                Follow this link to verify your email address \(email) for \(appName):

                \(link)

                If you did not ask to verify this address, ignore this mail.

                \(appName)
                """
        }
    }
}
