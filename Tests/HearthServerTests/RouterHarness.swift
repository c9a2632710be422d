import Foundation
import HearthTesting
import HearthHTTP
import HearthAuth
import HearthJSON
import HearthMail
import HearthRules
import HearthSQLite
import HearthStore
import HearthStreams
import Logging
@testable import HearthServer
import HearthAccounts

/// The router over a real store in a fresh temp directory, driven in-process.
final class RouterHarness: Sendable {
    let directory = TemporaryDirectory(prefix: "hearth-server")
    /// SQLite in `directory`, or with `HEARTH_TEST_STORE=postgres` a fresh PostgreSQL
    /// database (scripts/test.sh's second pass).
    let store: any StorageEngine
    let router: Router

    /// Rules that allow everything, for tests about REST semantics rather than access.
    static let openRules = #"{"rules": {".read": true, ".write": true}}"#

    let auth: AuthContext
    /// The read cache, wired as `HearthService` wires it (on by default, so every router
    /// test also checks that cached reads never show stale data).
    let readCache: ReadCache?

    /// Cheap scrypt parameters so account tests stay fast (production uses ln=15).
    static let testHasher = PasswordHasher(parameters: try! ScryptParameters(logN: 10, r: 8, p: 1))

    init(policy: (any AccessPolicy)? = nil, settings: AuthSettings = AuthSettings(), hasher: PasswordHasher = testHasher,
         clock: @escaping @Sendable () -> Int64 = SQLiteTreeStore.systemMilliseconds,
         readCacheBytes: Int = ReadCache.defaultMaxBytes, storeOptions: StoreOptions = StoreOptions(),
         mailer: Mailer? = nil, console: Bool = false, rulesFile: String? = nil) throws {
        let cache = readCacheBytes > 0 ? ReadCache(maxBytes: readCacheBytes) : nil
        readCache = cache
        store = try Engines.open(try TestStore.location(directory: directory.path), options: storeOptions, hooks: EngineHooks(onCommit: { changes, _ in
            cache?.invalidate(changes.map(\.path.storageKey))
        }))
        var auth = try AuthContext.make(engine: store, settings: settings, hasher: hasher, clock: clock)
        if let mailer {
            auth.mailer = mailer
            auth.actionMail = EmailActionMail(linkBase: "https://app.example.com/action", appName: settings.projectID)
        }
        self.auth = auth
        let rulesPolicy = try RulesAccessPolicy(rules: RuleSet.compile(rulesFile ?? Self.openRules))
        var context = RESTContext(
            store: store, policy: policy ?? rulesPolicy,
            pushIDs: SharedPushIDGenerator(), logger: Logger(label: "test"), auth: auth,
            streams: StreamHub(clock: SQLiteTreeStore.systemMilliseconds))
        context.readCache = cache
        if console { context.console = ConsoleAccounts(store: store.consoleRecords, hasher: hasher, clock: clock) }
        if let rulesFile {
            // A rules file the console (and `/.settings/rules.json`) can read and replace.
            let path = directory.path + "/rules.json"
            try Data(rulesFile.utf8).write(to: URL(fileURLWithPath: path))
            let history = RulesHistory(records: store.consoleRecords, clock: clock, logger: Logger(label: "test"))
            context.rulesSettings = RulesSettings(path: path, policy: rulesPolicy, history: history, replaced: {})
        }
        router = Router(context: context)
    }

    /// An ID token for `uid`, creating that (anonymous) user first if needed.
    func token(for uid: String) throws -> String {
        let accounts = auth.service.accounts
        let user = try accounts.user(uid: uid) ?? {
            let now = SQLiteTreeStore.systemMilliseconds()
            let user = UserRecord(uid: uid, provider: .anonymous, createdAt: now, validSince: now / 1000)
            try accounts.insert(user)
            return user
        }()
        return try auth.service.idToken(for: user, now: SQLiteTreeStore.systemMilliseconds())
    }

    func bearer(_ uid: String) throws -> [(String, String)] {
        [("Authorization", "Bearer " + (try token(for: uid)))]
    }

    deinit { store.close() }

    /// Adds the console administrator root@example.com and signs in: the session's cookie and CSRF token.
    func consoleSession() async throws -> (cookie: String, csrf: String) {
        try router.context.console!.add(email: "root@example.com", password: "correct horse battery")
        let signIn = await send("POST", "/console/api/session", #"{"email":"root@example.com","password":"correct horse battery"}"#,
                                headers: [("Content-Type", "application/json")])
        guard let cookie = signIn.headers["Set-Cookie"]?.split(separator: ";").first, case .string(let csrf)? = signIn.json?.objectValue?["csrf"] else {
            throw LiveClientError("console sign-in failed: \(signIn.status) \(signIn.text)")
        }
        return (String(cookie), csrf)
    }

    func send(_ method: String, _ target: String, _ body: String? = nil, headers: [(String, String)] = []) async -> HTTPResponse {
        let request = HTTPRequest(
            method: method, target: target, headers: HTTPHeaders(headers.map { (name: $0.0, value: $0.1) }),
            body: body.map { Array($0.utf8) } ?? [])
        return await withCheckedContinuation { continuation in
            router.handle(request, responder: HTTPResponder { continuation.resume(returning: $0) })
        }
    }
}

extension HTTPResponse {
    var text: String { String(decoding: body, as: UTF8.self) }
    var json: JSONValue? { try? JSONParser.parse(body) }
    var errorMessage: String? {
        if case .object(let o)? = json, case .string(let s)? = o["error"] { return s }
        return nil
    }
}

extension StorageEngine {
    /// The console's records, as the SQLite engine's `console` names them.
    var console: any ConsoleRecords { consoleRecords }
}

/// Which engine the in-process tests run on: SQLite, or PostgreSQL with
/// `HEARTH_TEST_STORE=postgres` (a fresh database from the shared test cluster).
enum TestStore {
    static func location(directory: String) throws -> StoreLocation {
        guard ProcessInfo.processInfo.environment["HEARTH_TEST_STORE"] == "postgres" else { return .sqlite(directory: directory) }
        return .postgres(url: try PostgresCluster.shared().makeDatabase())
    }
}
