import Dispatch
import Foundation
import HearthRules
import HearthStore
import HearthStreams
import HearthTriggers
import Logging

/// Opens the namespaces besides the default (issue 28) the way `HearthService` wires the
/// default one: a store of its own beside the default's (`EngineFactory.location(ofNamespace:beside:)`),
/// its rules, streams, listens, onDisconnect ledger and wire protocol, over the server's
/// accounts, with the triggers file's triggers recording and delivering this namespace's
/// events (its outbox, its name as the events' instance).
struct NamespaceOpener: Sendable {
    let configuration: HearthConfiguration
    let location: StoreLocation
    let engine: any EngineFactory
    /// The default namespace's REST context: the server-wide parts (accounts, console, metrics).
    let base: RESTContext
    let wireSessions: WireSessionRegistry
    let metrics: ServerMetrics
    let logger: Logger
    /// The triggers file's definitions, when one is set.
    var triggerDefinitions: [TriggerDefinition]? = nil
    /// The server's `host:port` once it listens: a namespace opened later starts delivering at once.
    var databaseHost = LateBox<String>()

    /// Where an emulator-mode namespace's replaced rules go: `<data directory>/namespaces/<name>.rules.json`
    /// (the store's own directory when it has one, else `--data-dir`), so a restart keeps them.
    func createdRulesPath(_ name: String) -> String {
        (engine.dataDirectory(of: location) ?? configuration.dataDirectory) + "/namespaces/" + name + ".rules.json"
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
        if FileManager.default.fileExists(atPath: path) { return try open(name, rulesPath: path) }
        return try open(name, rulesPath: configuration.rulesPath, replacementsPath: path)
    }

    /// Opens namespace `name` with the rules file at `rulesPath` and starts its housekeeping;
    /// its rules replacements go to `replacementsPath` (default: `rulesPath`).
    func open(_ name: String, rulesPath: String, replacementsPath: String? = nil) throws(StartupError) -> Namespace {
        var settings = configuration
        settings.rulesPath = rulesPath
        let (policy, rulesText) = try HearthService.loadRules(settings, logger: logger)
        let hub = StreamHub(options: configuration.streams, clock: WallClock.milliseconds,
                            broadcastEvents: StreamContext.broadcastEvents)
        let readCache = HearthService.readCache(configuration, engine: engine)
        let listens = ListenAccess(hub: hub, policy: policy, readCache: readCache)
        let signals = SharedEngineSignals(logger: logger, hub: hub, wireSessions: wireSessions)
        let triggersBox = LateBox<TriggerDelivery>()
        let hooks = HearthService.hooks(listens: listens, signals: signals, triggers: triggersBox, metrics: metrics.database(name),
                                        logger: logger)
        let own = engine.location(ofNamespace: name, beside: location)
        if let directory = engine.dataDirectory(of: own) {
            try? FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        }
        let store = try HearthService.openStore(own, engine: engine, hooks: hooks, configuration: configuration, logger: logger)
        logger.info("namespace \(name): data store \(own), rules from \(rulesPath)")
        let history = HearthService.rulesHistory(store, rulesText: rulesText, logger: logger)
        var context = base.serving(Database(store: store, policy: policy), streams: hub)
        context.namespaceLabel = ServerMetrics.label(ofNamespace: name)
        context.readCache = readCache.isEnabled ? readCache : nil
        let triggers = HearthService.triggers(triggerDefinitions, outbox: store.triggerOutbox, instance: name,
                                              configuration: configuration, logger: logger)
        triggersBox.value = triggers
        context.writeEffects = triggers.map { $0.effects(for:) }
        context.triggers = triggers
        let ledger = HearthService.onDisconnectLedger(store, database: context.database, authenticator: base.auth.authenticator,
                                                      logger: logger)
        context.wire = HearthService.wire(configuration, database: context.database, hub: hub, auth: base.auth, ledger: ledger,
                                          sessions: wireSessions, logger: logger, namespaces: [], longPolls: base.wire?.longPolls)
        if let replacementsPath { settings.rulesPath = replacementsPath }
        let rules = HearthService.rulesSettings(settings, policy: policy, history: history, listens: listens, store: store, logger: logger,
                                                until: replacementsPath == nil ? nil : rulesPath)
        context.rulesSettings = rules
        let namespace = Namespace(name: name, store: store, listens: listens, rulesSettings: rules, ledger: ledger, context: context,
                                  triggers: triggers)
        namespace.startHousekeeping(configuration: configuration, auth: base.auth, logger: logger)
        if let host = databaseHost.value { triggers?.start(databaseHost: host) }
        return namespace
    }
}
