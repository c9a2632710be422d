import Foundation
import HearthAccounts
import HearthHTTP
import HearthJSON
import HearthRules
import HearthAuth
import Dispatch
import HearthStore
import HearthSystem
import HearthStreams
import HearthMail
import HearthTriggers
import Logging
import Synchronization

/// Why the server did not start. Descriptions are for the operator's terminal.
public enum StartupError: Error, CustomStringConvertible {
    case rules(RulesLoader.LoadError)
    case triggers(String)
    case keys(String)
    case serviceAccount(String)
    case adminServiceAccount(String)
    case mail(String)
    case identityProviders(String)
    case store(StoreError)
    /// A shared store's database could not be reached in `waitedSeconds`.
    case storeUnreachable(reason: String, waitedSeconds: Int, advice: String)
    case storeSetting(String)
    case listen(host: String, port: Int, reason: String)
    case unsafe(String)
    case dataDirectory(DataDirectoryLockError)
    /// The namespaces file (issue 28) is unreadable or invalid.
    case namespaces(String)

    public var description: String {
        switch self {
        case .rules(let error):
            return error.description
        case .triggers(let reason):
            return reason
        case .keys(let reason):
            return "cannot open the signing keys: \(reason)"
        case .serviceAccount(let reason):
            return "customTokenServiceAccounts: \(reason)"
        case .adminServiceAccount(let reason):
            return "adminServiceAccounts: \(reason)"
        case .mail(let reason):
            return "email actions: \(reason)"
        case .identityProviders(let reason):
            return "idpProviders: \(reason)"
        case .store(let error):
            return "cannot open the data store: \(error)"
        case .storeUnreachable(let reason, let waited, let advice):
            return "cannot reach the database after trying for \(waited) s (storeStartupWaitSeconds): \(reason). \(advice)"
        case .storeSetting(let reason):
            return reason
        case .listen(let host, let port, let reason):
            return "cannot listen on \(host):\(port): \(reason)"
        case .unsafe(let reason):
            return reason
        case .dataDirectory(let error):
            return error.description
        case .namespaces(let reason):
            return reason
        }
    }
}

/// The composition root (DESIGN.md §2): builds the store, the access policy, the router and
/// the HTTP server from one configuration, and runs them until `shutdown`.
public final class HearthService: Sendable {
    public let configuration: HearthConfiguration
    private let logger: Logger
    private let store: any StorageEngine
    private let http: HTTPServer
    /// Bound in `init` before anything is created on disk, so a taken port leaves no trace.
    private let socket: BoundSocket
    private let policy: RulesAccessPolicy
    /// Every change of the running rules goes through it (and into their history).
    private let rulesSettings: RulesSettings
    /// The core's listen half: the commit hook, rules reviews, revocation sweeps.
    private let listens: ListenAccess
    /// Internal (not private): live tests mint the codes a reset mail would carry.
    let authContext: AuthContext
    private let ledger: OnDisconnectLedger
    /// The data directory's lock (issue 24; an engine with a local directory), held until
    /// the store is closed.
    private let directoryLock: DataDirectoryLock?
    private let timers = Mutex<[DispatchSourceTimer]>([])
    private let metrics: ServerMetrics
    /// Set once `http` exists (the metrics text reads its counters).
    private let httpBox = LateBox<HTTPServer>()
    /// The triggers (issue 27), when a triggers file is set.
    private let triggers: TriggerDelivery?
    /// The open long-poll sessions, ended first at shutdown (their held polls answered).
    private let longPolls: LongPollRegistry?
    /// The namespaces (issue 28); the default one is this service's `store`.
    private let namespaces: NamespaceRegistry
    /// The server's `host:port` for the triggers of namespaces opened after the start.
    private let triggersHost: LateBox<String>

    /// Subscribed locations below a write that the writer compares before and after it, at
    /// most; past it every one of them gets its event.
    public static let maxWatchedLocationsPerWrite = ListenAccess.maxWatchedLocationsPerWrite

    /// `accessLogSink`: where access lines go instead of `logger` (`hearth serve` formats
    /// them straight into its log buffer, `AccessLogSink`).
    public init(configuration: HearthConfiguration, logger: Logger, accessLogSink: AccessLogSink? = nil) throws(StartupError) {
        self.configuration = configuration
        self.logger = logger
        try Self.refuseUnsafeSettings(configuration)
        let rulesText: String
        (policy, rulesText) = try Self.loadRules(configuration, logger: logger)
        let triggerDefinitions = try Self.loadTriggers(configuration)
        let namespacesFile = try Self.loadNamespaces(configuration)
        let adminGrant = try Self.adminGrant(configuration)
        let triggersBox = LateBox<TriggerDelivery>()
        // Bind before the store and the keys exist: a serve that cannot listen creates
        // neither the data directory nor anything in it.
        socket = try Self.bind(configuration)
        let metrics = ServerMetrics()
        self.metrics = metrics
        let hub = StreamHub(options: configuration.streams, clock: WallClock.milliseconds,
                            broadcastEvents: StreamContext.broadcastEvents)
        let (location, engine) = try Self.engine(for: configuration)
        let readCache = Self.readCache(configuration, engine: engine)
        let listens = ListenAccess(hub: hub, policy: policy, readCache: readCache)
        self.listens = listens
        let wireSessions = WireSessionRegistry()
        let signals = SharedEngineSignals(logger: logger, hub: hub, wireSessions: wireSessions)
        let hooks = Self.hooks(listens: listens, signals: signals, triggers: triggersBox, metrics: metrics.database(""), logger: logger)
        directoryLock = try Self.lockDataDirectory(of: location, engine: engine)
        store = try Self.openStore(location, engine: engine, hooks: hooks, configuration: configuration, logger: logger)
        logger.info("data store: \(location)")
        let rulesHistory = Self.rulesHistory(store, rulesText: rulesText, logger: logger)
        let auth = try Self.auth(store, configuration: configuration, logger: logger)
        self.authContext = auth
        var context = RESTContext(
            store: store, policy: policy, pushIDs: SharedPushIDGenerator(), logger: logger, auth: auth, streams: hub)
        context.readCache = readCache.isEnabled ? readCache : nil
        let triggers = Self.triggers(triggerDefinitions, outbox: store.triggerOutbox, configuration: configuration, logger: logger)
        (self.triggers, triggersBox.value) = (triggers, triggers)
        context.writeEffects = triggers.map { $0.effects(for:) }
        context.triggers = triggers
        context.adminGrant = adminGrant
        context.console = Self.console(store, configuration: configuration)
        let ledger = Self.onDisconnectLedger(store, database: context.database, authenticator: auth.authenticator, logger: logger)
        self.ledger = ledger
        // One ledger of unsent bytes for the HTTP server and the long-poll outboxes, so
        // `maxUnsentBytes` bounds both.
        let unsent = UnsentBytes(limit: configuration.limits.maxUnsentBytes)
        context.wire = Self.wire(configuration, database: context.database, hub: hub, auth: auth, ledger: ledger,
                                 sessions: wireSessions, logger: logger, unsent: unsent)
        longPolls = context.wire?.longPolls
        rulesSettings = Self.rulesSettings(configuration, policy: policy, history: rulesHistory, listens: listens, store: store,
                                           logger: logger)
        context.rulesSettings = rulesSettings
        let trimmer = MemoryTrimmer()
        let namespacesBox = LateBox<NamespaceRegistry>()
        context.metricsText = Self.metricsText(metrics: metrics, httpBox: httpBox, trimmer: trimmer, namespaces: namespacesBox)
        let primary = Namespace(name: "", store: store, listens: listens, rulesSettings: rulesSettings, ledger: ledger, context: context)
        var opener = NamespaceOpener(configuration: configuration, location: location, engine: engine, base: context,
                                     wireSessions: wireSessions, metrics: metrics, logger: logger)
        opener.triggerDefinitions = triggerDefinitions
        triggersHost = opener.databaseHost
        namespaces = try Self.namespaces(namespacesFile, primary: primary, opener: opener, configuration: configuration,
                                         directoryLock: directoryLock)
        namespacesBox.value = namespaces
        http = Self.httpServer(configuration, router: Router(context: context, namespaces: namespaces), metrics: metrics,
                               trimmer: trimmer, logger: logger, accessLogSink: accessLogSink, unsent: unsent)
        httpBox.value = http
    }

    /// Logs and counts what the store says about space on the data volume.
    static func report(_ event: StorageEvent, logger: Logger, metrics: DatabaseMetrics) {
        switch event {
        case .writeRefused:
            metrics.recordStorageRefusal()
        case .becameFull(let directory):
            logger.error("the volume holding \(directory) is full: writes and sign-ups are refused with 507 and /readyz answers 503 until space is freed. Free space on the volume or delete data through the API (deletes still work), then writes resume by themselves")
        case .recovered:
            logger.notice("space on the data volume is back: writes are taken again and /readyz answers ready")
        case .reserveUnavailable(let directory):
            logger.warning("cannot allocate the \(StorageEvent.reserveBytes)-byte reserve in \(directory): the volume is nearly full, and deletes may fail once it is full")
        }
    }

    /// Starts listening; returns the bound port and logs `listening on http://HOST:PORT`.
    @discardableResult
    public func start() throws(StartupError) -> Int {
        if let files = HTTPServer.raiseOpenFileLimit(), files < configuration.limits.maxConnections + 64 {
            logger.warning("open-file limit \(files) is below max connections \(configuration.limits.maxConnections): raise it (ulimit -n, LimitNOFILE=) or lower HEARTH_MAX_CONNECTIONS")
        }
        let port: Int
        do {
            port = try http.start(on: socket)
        } catch {
            namespaces.closeExtras()
            store.close()
            throw .listen(host: configuration.host, port: configuration.port, reason: "\(error)")
        }
        let shownHost = configuration.host.contains(":") ? "[\(configuration.host)]" : configuration.host
        startHousekeeping()
        let databaseHost = "\(shownHost):\(port)"
        triggers?.start(databaseHost: databaseHost)
        triggersHost.value = databaseHost
        for namespace in namespaces.extras { namespace.triggers?.start(databaseHost: databaseHost) }
        // Before the listening line, which tells a watcher the start is complete.
        if configuration.auth.acceptEmulatorOwner {
            logger.warning("emulator mode (--accept-emulator-owner) is on: `Bearer owner` is an admin, and unsigned tokens are accepted, for clients on this machine (refused through a proxy and from web pages of other origins); never use it with data that matters")
        }
        logger.notice("listening on http://\(shownHost):\(port)")
        return port
    }

    /// Stream keep-alives and expiry, revocation checks for open streams, change-log trims.
    private func startHousekeeping() {
        let (store, listens, ledger, auth, configuration, logger) = (self.store, self.listens, self.ledger, authContext, self.configuration, self.logger)
        timers.withLock { timers in
            timers += Self.housekeeping(store: store, listens: listens, ledger: ledger, configuration: configuration, auth: auth,
                                        logger: logger)
            if store.isShared {
                // A key rotated on another node signs here too.
                let keys = authContext.service.keys
                timers.append(Self.timer(every: Engines.keyReloadInterval, on: authContext.work) { keys.reload() })
            }
        }
    }

    /// One namespace's stream sweeps and timers: change-log trims and, on a shared engine,
    /// the onDisconnect operations of nodes whose lease expired.
    static func housekeeping(store: any StorageEngine, listens: ListenAccess, ledger: OnDisconnectLedger,
                             configuration: HearthConfiguration, auth: AuthContext, logger: Logger) -> [DispatchSourceTimer] {
        let authenticator = auth.authenticator
        listens.startSweeps(revocationCheckEvery: configuration.streamRevocationCheckInterval, on: auth.work) { uid, issuedAt in
            authenticator.isStillValid(uid: uid, issuedAt: issuedAt)
        }
        var timers = [timer(every: configuration.store.changeLogTrimInterval, on: DispatchQueue.global(qos: .utility)) {
            store.trimChangeLog()
        }]
        if store.isShared {
            // This check also tells the log when the database stops and starts answering
            // (once each way, StoreOutageLog), rather than failing every time.
            let outages = StoreOutageLog(logger: logger, clock: WallClock.milliseconds)
            timers.append(timer(every: Engines.orphanCheckInterval, on: DispatchQueue.global(qos: .utility)) {
                outages.run("cannot read the onDisconnect operations of stopped nodes") {
                    let ran = try ledger.runLeftovers()
                    if ran > 0 { logger.info("ran \(ran) onDisconnect operations of connections whose node stopped") }
                }
            })
        }
        return timers
    }

    static func timer(every seconds: Double, on queue: DispatchQueue, _ body: @escaping @Sendable () -> Void) -> DispatchSourceTimer {
        let timer = DispatchSource.makeTimerSource(queue: queue)
        let nanos = max(1_000_000, Int(seconds * 1e9))
        timer.schedule(deadline: .now() + .nanoseconds(nanos), repeating: .nanoseconds(nanos), leeway: .nanoseconds(nanos / 10))
        timer.setEventHandler(handler: body)
        timer.activate()
        return timer
    }

    static func isLoopback(_ host: String) -> Bool {
        LoopbackHost.containsAddress(host)
    }

    /// The identity providers of the providers file (for tests).
    var identityProviders: IdentityProviders? { authContext.service.identityProviders }

    /// Open streams (for tests and metrics).
    public var openStreams: Int { listens.hub.openStreams }

    /// Closes every stream and wire-protocol listen without a last event, so that their
    /// clients connect again and start over: what a node does when it missed changes
    /// (`EngineHooks.onFeedGap`), since it can no longer vouch for what it sent.
    public func startStreamsOver() {
        listens.hub.endAll(.reconnect)
    }

    /// Re-reads the rules file and swaps the rules in atomically (on `SIGHUP`). An invalid
    /// or unreadable file keeps the current rules; the reason is logged. True on success.
    @discardableResult
    public func reloadRules() -> Bool {
        do {
            try rulesSettings.reload()
            logger.info("rules reloaded from \(configuration.rulesPath)")
            listens.reviewAccess(in: store)
        } catch {
            logger.error("rules NOT reloaded, keeping the previous rules: \(error)")
            return false
        }
        var reloaded = true
        for namespace in namespaces.extras {
            do {
                try namespace.rulesSettings.reload()
                namespace.listens.reviewAccess(in: namespace.store)
            } catch {
                logger.error("rules of namespace \(namespace.name) NOT reloaded, keeping its previous rules: \(error)")
                reloaded = false
            }
        }
        return reloaded
    }

    /// Re-reads the triggers file (on `SIGHUP`); an invalid file keeps the running triggers.
    @discardableResult
    public func reloadTriggers() -> Bool {
        guard let triggers, let path = configuration.triggersPath else { return true }
        do {
            try triggers.reload(path: path)
            // The same file for every namespace: once it parsed, it parses for each.
            for namespace in namespaces.extras { try namespace.triggers?.reload(path: path) }
            logger.info("triggers reloaded from \(path): \(triggers.triggerNames.count) trigger(s)")
            return true
        } catch {
            logger.error("triggers NOT reloaded, keeping the running ones: \(error)")
            return false
        }
    }

    /// Stops accepting, lets in-flight requests finish (up to the grace period), then
    /// commits queued writes and closes the database.
    public func shutdown() async {
        logger.info("shutting down")
        timers.withLock { timers in
            for timer in timers { timer.cancel() }
            timers = []
        }
        listens.stop()
        longPolls?.endAll()
        await http.shutdown(gracePeriod: configuration.shutdownGracePeriod)
        triggers?.close()
        namespaces.closeExtras()
        store.close()
        directoryLock?.release()
        logger.info("stopped")
    }
}

/// A reference set once after creation, read from other threads.
final class LateBox<Value: Sendable>: Sendable {
    private let storage = Mutex<Value?>(nil)
    var value: Value? {
        get { storage.withLock { $0 } }
        set { storage.withLock { $0 = newValue } }
    }
}

extension RESTContext {
    /// The REST adapter over a database core built on `store` (the composition root's
    /// wiring: only here does the store meet the core).
    init(store: any TreeStore, policy: any AccessPolicy, pushIDs: SharedPushIDGenerator, logger: Logger,
         auth: AuthContext, streams: StreamHub) {
        self.init(database: Database(store: store, policy: policy), pushIDs: pushIDs, logger: logger, auth: auth, streams: streams)
    }
}

// MARK: Construction (the pieces `HearthService.init` wires together)
