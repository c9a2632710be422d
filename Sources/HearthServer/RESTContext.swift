import HearthAuth
import HearthAccounts
import HearthHTTP
import HearthJSON
import HearthStreams
import HearthTriggers
import Logging

/// What the RTDB endpoints need, passed in by the composition root (no globals). The REST
/// adapter over the database core: endpoints turn requests into `Database` calls and its
/// results and `DatabaseError`s into HTTP answers (`response(for:)`); statuses exist only here.
struct RESTContext: Sendable {
    let pushIDs: SharedPushIDGenerator
    let logger: Logger
    /// Accounts, tokens and the Identity Toolkit endpoints.
    let auth: AuthContext
    /// Live change streams.
    let streams: StreamHub
    /// `/.settings/rules.json`, when the rules come from a file.
    var rulesSettings: RulesSettings? = nil
    /// The wire protocol's sessions (`/.ws`), when served.
    var wire: WireContext? = nil
    /// The body of `GET /metrics`, when metrics are on.
    var metricsText: (@Sendable () -> [UInt8])? = nil
    /// Rendered bodies of plain reads; whoever sets it must also invalidate it on every
    /// commit (`HearthService` does, in the store's `onCommit`).
    var readCache: ReadCache? = nil {
        didSet { database = database.with(readCache: readCache) }
    }
    /// The effects of every write (issue 27: trigger events), asked per caller.
    var writeEffects: Database.EffectsProvider? = nil {
        didSet { database = database.with(effects: writeEffects) }
    }
    /// The admin console (issue 16); nil when it is off.
    var console: ConsoleAccounts? = nil
    /// The database triggers (issue 27), when a triggers file is set: the console's Triggers screen.
    var triggers: TriggerDelivery? = nil
    /// `adminServiceAccounts`' grant (`/oauth2/v4/token`), when any are listed.
    var adminGrant: AdminGrantVerifier? = nil
    /// The transport-neutral core (its store, `policy`, `readCache` and write effects).
    private(set) var database: Database
    /// Who may read and write what.
    var policy: any AccessPolicy { database.policy }

    /// The composition root builds `database` over its store (`HearthService`).
    init(database: Database, pushIDs: SharedPushIDGenerator, logger: Logger, auth: AuthContext, streams: StreamHub) {
        self.database = database
        self.pushIDs = pushIDs
        self.logger = logger
        self.auth = auth
        self.streams = streams
    }

    /// This context over another namespace's core and streams (issue 28): the same
    /// accounts, console and server-wide parts; no rules settings, wire protocol, read
    /// cache or write effects until the caller sets its own.
    func serving(_ database: Database, streams: StreamHub) -> RESTContext {
        var context = RESTContext(database: database, pushIDs: pushIDs, logger: logger, auth: auth, streams: streams)
        context.console = console
        context.adminGrant = adminGrant
        context.metricsText = metricsText
        return context
    }

    /// What a failed request was doing: a store outage answers each differently.
    enum Operation: Sendable {
        case read, write, other
    }

    /// What the client sees for a failed database operation; internal causes go to the
    /// log only.
    func response(for error: DatabaseError, during operation: Operation = .other) -> APIError {
        switch error {
        case .permissionDenied(let denial):
            return .writeDenied(denial)
        case .stale:
            // Only compare-and-set writes fail this way; their endpoint answers 412 itself.
            return .internalError
        case .tooLarge(let reason):
            return .writeTooLarge(reason)
        case .tooManyTriggerEvents(let limit):
            return APIError(413, "The write would cause more than \(limit) trigger events; write fewer locations at once")
        case .storageFull:
            // Logged once per full episode by HearthService's storage observer.
            return .insufficientStorage
        case .unavailable:
            switch operation {
            case .read: return .readUnavailable
            case .write: return .writeNotWritten
            case .other: return .unavailable
            }
        case .outcomeUnknown:
            return .writeOutcomeUnknown
        case .tooManyListens:
            return APIError(503, "Too many open streams; try again later")
        case .tooManyListensFromAddress:
            return APIError(429, "Too many open streams from this address")
        case .internalError(let reason):
            logger.error("\(reason)")
            return .internalError
        }
    }

    func response(for error: any Error, during operation: Operation = .other) -> APIError {
        if let api = error as? APIError { return api }
        return response(for: DatabaseError.from(error), during: operation)
    }
}
