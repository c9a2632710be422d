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
    /// Every request copies the context (into the router, the token check's closure, the
    /// endpoints' work), so its many references live in one immutable box: a copy costs
    /// one retain, not one per field (a plain GET paid ~100 extra retain/release pairs
    /// when they were stored inline; docs/bench/history.md, "the GET regression found and fixed"). Setting a field (wiring
    /// time only) replaces the box.
    private var box: Box

    private final class Box: Sendable {
        let fields: Fields
        init(_ fields: Fields) { self.fields = fields }
    }

    private struct Fields: Sendable {
        let pushIDs: SharedPushIDGenerator
        let logger: Logger
        let auth: AuthContext
        let streams: StreamHub
        var rulesSettings: RulesSettings?
        var wire: WireContext?
        var metricsText: (@Sendable () -> [UInt8])?
        var readCache: ReadCache?
        var writeEffects: Database.EffectsProvider?
        var console: ConsoleAccounts?
        var triggers: TriggerDelivery?
        var adminGrant: AdminGrantVerifier?
        var database: Database
        var namespaceLabel = ServerMetrics.defaultLabel
        /// Why requests were answered 503 for an unavailable store, for the operator.
        let unavailable: UnavailableLog
    }

    private mutating func update(_ change: (inout Fields) -> Void) {
        var fields = box.fields
        change(&fields)
        box = Box(fields)
    }

    var pushIDs: SharedPushIDGenerator { box.fields.pushIDs }
    /// The `namespace` label of this context's database in the access log and metrics
    /// (`ServerMetrics.label(ofNamespace:)`).
    var namespaceLabel: String {
        get { box.fields.namespaceLabel }
        set { update { $0.namespaceLabel = newValue } }
    }
    var logger: Logger { box.fields.logger }
    /// Accounts, tokens and the Identity Toolkit endpoints.
    var auth: AuthContext { box.fields.auth }
    /// Live change streams.
    var streams: StreamHub { box.fields.streams }
    /// `/.settings/rules.json`, when the rules come from a file.
    var rulesSettings: RulesSettings? {
        get { box.fields.rulesSettings }
        set { update { $0.rulesSettings = newValue } }
    }
    /// The wire protocol's sessions (`/.ws`), when served.
    var wire: WireContext? {
        get { box.fields.wire }
        set { update { $0.wire = newValue } }
    }
    /// The body of `GET /metrics`, when metrics are on.
    var metricsText: (@Sendable () -> [UInt8])? {
        get { box.fields.metricsText }
        set { update { $0.metricsText = newValue } }
    }
    /// Rendered bodies of plain reads; whoever sets it must also invalidate it on every
    /// commit (`HearthService` does, in the store's `onCommit`).
    var readCache: ReadCache? {
        get { box.fields.readCache }
        set { update { $0.readCache = newValue; $0.database = $0.database.with(readCache: newValue) } }
    }
    /// The effects of every write (trigger events), asked per caller.
    var writeEffects: Database.EffectsProvider? {
        get { box.fields.writeEffects }
        set { update { $0.writeEffects = newValue; $0.database = $0.database.with(effects: newValue) } }
    }
    /// The admin console; nil when it is off.
    var console: ConsoleAccounts? {
        get { box.fields.console }
        set { update { $0.console = newValue } }
    }
    /// The database triggers, when a triggers file is set: the console's Triggers screen.
    var triggers: TriggerDelivery? {
        get { box.fields.triggers }
        set { update { $0.triggers = newValue } }
    }
    /// `adminServiceAccounts`' grant (`/oauth2/v4/token`), when any are listed.
    var adminGrant: AdminGrantVerifier? {
        get { box.fields.adminGrant }
        set { update { $0.adminGrant = newValue } }
    }
    /// The transport-neutral core (its store, `policy`, `readCache` and write effects).
    var database: Database { box.fields.database }
    /// Who may read and write what.
    var policy: any AccessPolicy { box.fields.database.policy }

    /// The composition root builds `database` over its store (`HearthService`).
    init(database: Database, pushIDs: SharedPushIDGenerator, logger: Logger, auth: AuthContext, streams: StreamHub) {
        box = Box(Fields(pushIDs: pushIDs, logger: logger, auth: auth, streams: streams, rulesSettings: nil, wire: nil,
                         metricsText: nil, readCache: nil, writeEffects: nil, console: nil, triggers: nil,
                         adminGrant: nil, database: database, unavailable: UnavailableLog(logger: logger)))
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
        case .invalidValue(let error):
            return APIError(400, error.description)
        case .tooManyTriggerEvents(let limit):
            return APIError(413, "The write would cause more than \(limit) trigger events; write fewer locations at once")
        case .storageFull:
            // Logged once per full episode by HearthService's storage observer.
            return .insufficientStorage
        case .unavailable(let cause):
            let (what, answer): (String, APIError) = switch operation {
            case .read: ("a read", .readUnavailable)
            case .write: ("a write", .writeNotWritten)
            case .other: ("a request", .unavailable)
            }
            box.fields.unavailable.refused(what, cause: cause)
            return answer
        case .outcomeUnknown(let cause):
            box.fields.unavailable.refused("a write", cause: cause, outcomeUnknown: true)
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
