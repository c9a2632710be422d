import ArgumentParser
import HearthAuth
import HearthJSON
import HearthAccounts
import HearthServer
import HearthStore

/// `hearth token`: mint an ID token for a user, or an operator's admin token.
struct Token: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Print an ID token for --uid, with --custom a custom token for --uid, or with --admin a token that bypasses the rules.",
        discussion: """
            Tokens are signed with the data directory's current key and live at most \(IDTokenClaims.maxLifetime) s (longer-lived tokens are refused). \
            A custom token (--custom) is what an app's backend hands its user for signInWithCustomToken: any uid, existing or not \
            (the account is made at the first sign-in), with --claims in every ID token of that sign-in; it is usable for \(CustomTokenVerifier.maxLifetime) s.
            """)

    @OptionGroup var data: AccountsDataOption
    @Option(help: "The user to mint a token for.") var uid: String?
    @Option(help: "Extra custom claims, a JSON object (at most 1000 bytes).") var claims: String?
    @Option(help: "Lifetime in seconds (1-\(IDTokenClaims.maxLifetime)).") var ttl: Int64 = IDTokenClaims.defaultLifetime
    @Flag(help: "An admin token: full read and write access, no rules. Keep it secret.") var admin = false
    @Flag(help: "A custom token for --uid (signInWithCustomToken); the user need not exist yet.") var custom = false

    func validate() throws {
        guard admin != (uid != nil) else { throw ValidationError("Give exactly one of --uid and --admin.") }
        guard !(custom && admin) else { throw ValidationError("--custom mints a token for --uid, not with --admin.") }
        guard IDTokenClaims.lifetimeRange.contains(ttl) else {
            throw ValidationError("--ttl must be \(IDTokenClaims.lifetimeRange) seconds.")
        }
        _ = try extraClaims()
    }

    /// `--claims`, checked.
    func extraClaims() throws -> [JSONKey: JSONValue] {
        guard let claims else { return [:] }
        guard case .object(let object)? = try? JSONParser.parse(claims) else { throw ValidationError("--claims must be a JSON object.") }
        guard object[Authenticator.adminClaim] == nil else {
            throw ValidationError("--claims may not set \(Authenticator.adminClaim); use --admin.")
        }
        return object
    }

    func run() throws {
        let extra = try extraClaims()
        try Operator.withAccounts(data, writes: false) { service in
            let now = WallClock.milliseconds()
            if admin {
                print(try service.operatorToken(now: now, lifetime: ttl))
            } else if let uid, custom {
                print(try service.mintCustomToken(uid: uid, claims: extra))
            } else if let uid {
                guard let user = try service.accounts.user(uid: uid) else { throw Tool.fail("no user \(uid)") }
                print(try service.idToken(for: user, now: now, lifetime: ttl, extraClaims: extra))
            }
        }
    }
}

/// `hearth keys rotate`: a new signing key; old keys keep verifying.
struct Keys: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Manage token signing keys.", subcommands: [Rotate.self])

    struct Rotate: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Create a new signing key; tokens signed by older keys stay valid until they expire.")
        @OptionGroup var data: AccountsDataOption
        func run() throws {
            try Tool.run {
                let lock = try data.lock(.writesAccounts)
                defer { lock?.release() }
                let store = try data.openEngine()
                defer { store.close() }
                print("new signing key \(try KeyRing.rotate(store: store.signingKeys))")
            }
        }
    }
}
