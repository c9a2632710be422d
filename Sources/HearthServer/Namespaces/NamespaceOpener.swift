import Foundation
import HearthAccounts
import HearthAuth
import HearthHTTP
import HearthJSON
import HearthRules
import HearthStreams
import HearthTriggers
import Logging

/// The parts every namespace's adapters share: accounts (per server, kept in the default
/// namespace's store), the console's accounts, the admin grant, push ids, `/metrics`, the
/// long-poll sessions and the unsent-bytes ledger.
struct ServerParts: Sendable {
    var auth: AuthContext
    var pushIDs = SharedPushIDGenerator()
    var console: ConsoleAccounts?
    var adminGrant: AdminGrantVerifier?
    var metricsText: (@Sendable () -> [UInt8])?
    var longPolls: LongPollRegistry
    var unsent: UnsentBytes
}

/// Opens every namespace the same way, the default included: one `DatabaseInstance`
/// over a store of its own (the default's at the configured location, each other's beside
/// it), then its adapters — the REST context, the wire protocol, the rules file's settings
/// and the triggers file's triggers recording and delivering this namespace's events (its
/// outbox, its name as the events' instance; the project id for the default).
struct NamespaceOpener: Sendable {
    /// Opens the store of namespace `name` ("" for the default) with the hooks given.
    typealias StoreOpening = @Sendable (_ name: String, _ hooks: DatabaseInstance.Signals) throws(StartupError) -> DatabaseInstance.Store

    let configuration: HearthConfiguration
    let openStore: StoreOpening
    /// Milliseconds since the epoch (the streams' clock).
    let clock: @Sendable () -> Int64
    /// The store's own directory when it has one (created rules files go below it).
    let dataDirectory: String?
    /// The read cache's budget (0 on a shared engine: `HearthService.readCacheBytes`).
    let readCacheBytes: Int
    let wireSessions: WireSessionRegistry
    let metrics: ServerMetrics
    let logger: Logger
    /// The triggers file's definitions, when one is set.
    var triggerDefinitions: [TriggerDefinition]? = nil
    /// The server-wide parts, known once the default namespace is open.
    var server: ServerParts? = nil
    /// The server's `host:port` once it listens: a namespace opened later starts at once.
    var databaseHost = LateBox<String>()

    /// Where an emulator-mode namespace's rules file goes: `<data directory>/namespaces/<name>.rules.json`
    /// (the store's own directory when it has one, else `--data-dir`).
    func createdRulesPath(_ name: String) -> String {
        (dataDirectory ?? configuration.dataDirectory) + "/namespaces/" + name + ".rules.json"
    }

    /// A new namespace (emulator mode). With `rules` (a first rules replacement, compiled by
    /// the caller): they are written to its rules file and it opens with them. Without: it
    /// opens with its rules file when an earlier replacement left one, else with the
    /// server's rules file (`--rules`), read, never written: its first replacement goes to
    /// its own file, as the Firebase emulator gives every new namespace the rules it started with.
    func create(_ name: String, rules: [UInt8]?) throws -> Namespace {
        let path = createdRulesPath(name)
        try FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        if let rules {
            try Data(rules).write(to: URL(fileURLWithPath: path), options: .atomic)
        }
        let namespace = FileManager.default.fileExists(atPath: path)
            ? try open(name, rulesPath: path)
            : try open(name, rulesPath: configuration.rulesPath, replacementsPath: path)
        if let host = databaseHost.value, let server {
            namespace.start(HearthService.housekeeping(configuration: configuration, auth: server.auth, logger: logger, clock: clock),
                            databaseHost: host)
        }
        return namespace
    }

    /// Opens namespace `name` (not the default) with the rules file at `rulesPath`, over
    /// the server-wide parts; its rules replacements go to `replacementsPath` (default:
    /// `rulesPath`), which is read instead once it exists.
    func open(_ name: String, rulesPath: String, replacementsPath: String? = nil) throws(StartupError) -> Namespace {
        guard let server else { throw .namespaces("namespace \(name) opened before the default one") }
        return try assemble(name, rulesPath: rulesPath, replacementsPath: replacementsPath) { _ throws(StartupError) in server }.namespace
    }

    /// Opens the default namespace with its rules (read before anything is created on
    /// disk); `serverParts` makes the server-wide parts over its store (accounts live
    /// there), before its adapters are built.
    func openDefault(rules: (RuleSet, String), serverParts: (DatabaseInstance.Store) throws(StartupError) -> ServerParts)
        throws(StartupError) -> (namespace: Namespace, server: ServerParts) {
        try assemble("", rulesPath: configuration.rulesPath, rules: rules, serverParts: serverParts)
    }

    /// The one path every namespace is opened by; `rules`: the rules file's, read now when nil.
    private func assemble(_ name: String, rulesPath: String, replacementsPath: String? = nil, rules loaded: (RuleSet, String)? = nil,
                          serverParts: (DatabaseInstance.Store) throws(StartupError) -> ServerParts) throws(StartupError)
        -> (namespace: Namespace, server: ServerParts) {
        let (rules, rulesText): (RuleSet, String)
        if let loaded { (rules, rulesText) = loaded } else { (rules, rulesText) = try HearthService.loadRules(rulesPath, logger: logger) }
        let profiler = Profiler()
        // One sorting of a location's sinks for both of the hub's paths: kept while they
        // are all live, made afresh for each event while one is not.
        let prepare = ProfileRecording.prepareBroadcast(recordingIn: profiler)
        let hub = StreamHub(options: configuration.streams, clock: clock, prepareBroadcast: prepare)
        let signals = HearthService.signals(SharedEngineSignals(logger: logger, hub: hub, wireSessions: wireSessions),
                                            metrics: metrics.database(name), logger: logger)
        var made: ServerParts? = nil
        let instance: DatabaseInstance
        do {
            instance = try DatabaseInstance(
                rules: rules, rulesText: rulesText, hub: hub, readCacheBytes: readCacheBytes, signals: signals,
                recordsRulesCoverage: configuration.recordsRulesCoverage, clock: clock, logger: logger, profiler: profiler,
                open: { hooks throws(StartupError) in try openStore(name, hooks) },
                registrantStands: { store throws(StartupError) in
                    let parts = try serverParts(store)
                    made = parts
                    return OnDisconnectLedger.stands(parts.auth.authenticator.isStillValid(uid:issuedAt:))
                })
        } catch let error as StartupError {
            throw error
        } catch {
            throw .namespaces("\(error)")
        }
        guard let server = made else { throw .namespaces("the server's parts were not made") }
        if !name.isEmpty { logger.info("namespace \(name): rules from \(rulesPath)") }
        var context = RESTContext(database: instance.database, pushIDs: server.pushIDs, logger: logger, auth: server.auth,
                                  streams: hub)
        context.console = server.console
        context.adminGrant = server.adminGrant
        context.metricsText = server.metricsText
        let triggers = HearthService.triggers(triggerDefinitions, outbox: instance.store.triggerOutbox,
                                              instance: name.isEmpty ? nil : name, configuration: configuration, logger: logger)
        context.triggers = triggers
        context.wire = HearthService.wire(configuration, database: instance.database, hub: hub, auth: server.auth,
                                          ledger: instance.ledger, sessions: wireSessions, logger: logger,
                                          namespaces: name.isEmpty ? nil : [], longPolls: server.longPolls, unsent: server.unsent)
        let logger = self.logger
        context.namespaceLabel = ServerMetrics.label(ofNamespace: name)
        let rulesSettings = RulesSettings(path: replacementsPath ?? rulesPath, fallbackPath: replacementsPath.map { _ in rulesPath },
                                          instance: instance) {
            logger.info("rules replaced through /.settings/rules.json")
        }
        context.rulesSettings = rulesSettings
        let namespace = Namespace(name: name, instance: instance, rulesSettings: rulesSettings, context: context, triggers: triggers)
        return (namespace, server)
    }
}
