import Foundation
import HearthHTTP
import HearthJSON
import HearthRules
import HearthAuth
import Dispatch
import HearthStore
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
    case mail(String)
    case store(StoreError)
    /// A shared store's database could not be reached in `waitedSeconds`.
    case storeUnreachable(reason: String, waitedSeconds: Int, advice: String)
    case storeSetting(String)
    case listen(host: String, port: Int, reason: String)
    case unsafe(String)
    case dataDirectory(DataDirectoryLockError)

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
        case .mail(let reason):
            return "email actions: \(reason)"
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
    private let authContext: AuthContext
    private let ledger: OnDisconnectLedger
    /// A SQLite data directory's lock (issue 24), held until the store is closed.
    private let directoryLock: DataDirectoryLock?
    private let timers = Mutex<[DispatchSourceTimer]>([])
    private let metrics: ServerMetrics
    /// Set once `http` exists (the metrics text reads its counters).
    private let httpBox = LateBox<HTTPServer>()
    /// The triggers (issue 27), when a triggers file is set.
    private let triggers: TriggerDelivery?

    /// Subscribed locations below a write that the writer compares before and after it, at
    /// most; past it every one of them gets its event.
    public static let maxWatchedLocationsPerWrite = ListenAccess.maxWatchedLocationsPerWrite

    public init(configuration: HearthConfiguration, logger: Logger) throws(StartupError) {
        self.configuration = configuration
        self.logger = logger
        if configuration.auth.acceptEmulatorOwner && !Self.isLoopback(configuration.host) {
            throw .unsafe("--accept-emulator-owner makes `Bearer owner` an admin credential; it is allowed only on a loopback address, not \(configuration.host)")
        }
        let rulesText: String
        do {
            let loaded = try RulesLoader.loadWithText(configuration.rulesPath)
            (policy, rulesText) = (RulesAccessPolicy(rules: loaded.rules, logger: logger), loaded.text)
        } catch {
            throw .rules(error)
        }
        logger.info("rules loaded from \(configuration.rulesPath)")
        let triggerDefinitions: [TriggerDefinition]?
        do {
            triggerDefinitions = try configuration.triggersPath.map { path throws(TriggerConfigError) in try TriggerConfig.load(path: path) }
        } catch {
            throw .triggers(error.description)
        }
        let triggersBox = LateBox<TriggerDelivery>()
        // Bind before the store and the keys exist: a serve that cannot listen creates
        // neither the data directory nor anything in it.
        do {
            socket = try BoundSocket(host: configuration.host, port: configuration.port)
        } catch {
            throw .listen(host: configuration.host, port: configuration.port, reason: "\(error)")
        }
        let metrics = ServerMetrics()
        self.metrics = metrics
        let hub = StreamHub(options: configuration.streams, clock: WallClock.milliseconds,
                            broadcastEvents: StreamContext.broadcastEvents)
        let policy = self.policy
        let location: StoreLocation
        do {
            location = try configuration.storeLocation()
        } catch {
            throw .storeSetting(error.description)
        }
        // A node of a shared engine cannot know of another node's write before asking the
        // database, so it keeps no read cache: every read is the database's (issue 17).
        let readCache = ReadCache(maxBytes: location.isShared ? 0 : configuration.readCacheBytes)
        let listens = ListenAccess(hub: hub, policy: policy, readCache: readCache)
        self.listens = listens
        let wireSessions = WireSessionRegistry()
        let hooks = EngineHooks(
            watch: listens.watchedLocations(below:),
            observeCommit: { writes, nanoseconds in metrics.recordCommit(writes: writes, nanoseconds: nanoseconds) },
            observeStorage: { [logger] event in Self.report(event, logger: logger, metrics: metrics) },
            onCommit: { changes, view in
                listens.committed(changes, view: view)
                triggersBox.value?.committed(changes)
            },
            onFeedGap: { [logger] first, last in
                logger.error("this node missed changes \(first)...\(last): they left the change log before it read them (it fell more than the log's window behind). Every stream on this node is closed; clients reconnect and start over")
                hub.endAll(.reconnect)
            },
            onLeaseLost: { [logger] in
                let sessions = wireSessions.all()
                let text = "this node could not renew its database lease in time: it takes a new one when the database answers"
                if sessions.isEmpty {
                    logger.info("\(text) (no wire-protocol connection was open)")
                } else {
                    logger.warning("\(text); another node may run its connections' onDisconnect operations, so its \(sessions.count) wire-protocol connection(s) are closed without running them")
                }
                for session in sessions { session.endForLostLease() }
            })
        // One server per data directory: a second one is refused before it opens the
        // database, naming the first one's pid; the kernel drops the lock when it dies.
        if case .sqlite(let directory) = location {
            do {
                directoryLock = try DataDirectoryLock.take(.server, directory: directory, create: true)
            } catch {
                throw .dataDirectory(error)
            }
        } else {
            directoryLock = nil
        }
        do {
            store = try Engines.open(location, options: configuration.store, hooks: hooks, logger: logger,
                                     waitSeconds: configuration.storeStartupWaitSeconds)
        } catch {
            if location.isShared, StartupBackoff.isTransient(error) {
                throw .storeUnreachable(reason: "\(error)", waitedSeconds: configuration.storeStartupWaitSeconds,
                                        advice: Engines.connectionAdvice(configuration.store))
            }
            throw .store(error)
        }
        logger.info("data store: \(location)")
        // A rules file changed while Hearth was stopped is a change of the rules too.
        let rulesHistory = RulesHistory(records: store.consoleRecords, clock: WallClock.milliseconds, logger: logger)
        rulesHistory.record(rulesText, by: .fileAtStartup)
        let auth: AuthContext
        do {
            // What became of each email action's mail: logged without its address or link
            // (the link holds the code).
            var settings = configuration.auth
            // Another node may disable a user or revoke their tokens at any moment: every
            // check reads the user's status from the database (issue 17).
            if store.isShared { settings.userStatusCacheSeconds = 0 }
            auth = try AuthContext.make(engine: store, settings: settings)
                .withMail(configuration.auth, clock: WallClock.milliseconds) { [logger] message, outcome in
                    switch outcome {
                    case .sent(let attempts): logger.info("email action mail sent (\(message.subject.split(separator: " ").prefix(2).joined(separator: " ")), \(attempts) attempt(s))")
                    case .failed(let error, let attempts): logger.warning("email action mail not sent after \(attempts) attempt(s): \(error)")
                    }
                }
        } catch let error as AuthContext.MailSettingsError {
            store.close()
            throw .mail(error.description)
        } catch let error as AuthContext.ServiceAccountFileError {
            store.close()
            throw .serviceAccount(error.description)
        } catch {
            store.close()
            throw .keys("\(error)")
        }
        self.authContext = auth
        var context = RESTContext(
            store: store, policy: policy, pushIDs: SharedPushIDGenerator(), logger: logger, auth: auth, streams: hub)
        let reviewStore = store
        context.readCache = readCache.isEnabled ? readCache : nil
        let (outbox, projectID) = (store.triggerOutbox, configuration.auth.projectID)
        let triggers = triggerDefinitions.map { definitions in
            let delivery = TriggerDelivery(outbox: outbox, origin: EventOrigin(instance: projectID, databaseHost: ""),
                                           logger: logger, clock: WallClock.milliseconds)
            delivery.replace(definitions)
            return delivery
        }
        if let triggers { logger.info("\(triggers.triggerNames.count) trigger(s) loaded from \(configuration.triggersPath ?? "")") }
        (self.triggers, triggersBox.value) = (triggers, triggers)
        context.writeEffects = triggers.map { $0.effects(for:) }
        if configuration.consoleEnabled {
            context.console = ConsoleAccounts(store: store.consoleRecords, hasher: PasswordHasher(), idleSeconds: configuration.consoleIdleSeconds,
                                              clock: WallClock.milliseconds)
        }
        // onDisconnect operations of wire sessions that were open when Hearth last stopped
        // (a crash, a kill) run now, before anyone connects.
        let authenticator = auth.authenticator
        let ledger = OnDisconnectLedger(records: store.onDisconnectRecords, database: context.database) { caller in
            // The registrant's user and token time from the rules' `auth` (its `token` holds
            // the ID token's claims): revoked, disabled or deleted since, nothing runs.
            guard case .string(let uid)? = caller.auth.objectValue?["uid"],
                  case .int(let issuedAt)? = caller.auth.objectValue?["token"]?.objectValue?["iat"] else { return true }
            return authenticator.isStillValid(uid: uid, issuedAt: issuedAt)
        }
        self.ledger = ledger
        do {
            let ran = try ledger.runLeftovers()
            if ran > 0 { logger.info("ran \(ran) onDisconnect operations left by connections open when Hearth last stopped") }
        } catch {
            logger.error("cannot read the pending onDisconnect operations: \(error)")
        }
        context.wire = WireContext(database: context.database, hub: hub, authenticator: auth.authenticator, work: auth.work,
                                   clock: WallClock.milliseconds, logger: logger,
                                   limits: configuration.wire.fitted(toStreamsPerAddress: configuration.streams.maxStreamsPerAddress),
                                   namespaces: Set(configuration.namespaces), onDisconnect: ledger, sessions: wireSessions)
        rulesSettings = RulesSettings(path: configuration.rulesPath, policy: policy, history: rulesHistory) { [logger] in
            logger.info("rules replaced through /.settings/rules.json")
            listens.reviewAccess(in: reviewStore)
        }
        context.rulesSettings = rulesSettings
        var httpConfiguration = HTTPServerConfiguration()
        httpConfiguration.host = configuration.host
        httpConfiguration.port = configuration.port
        httpConfiguration.limits = configuration.limits
        if let count = configuration.ioQueueCount { httpConfiguration.ioQueueCount = count }
        httpConfiguration.trustedProxies = Set(configuration.trustedProxies)
        httpConfiguration.uncappedPaths = HealthEndpoint.paths
        let accessLog = configuration.logging.accessLog ? AccessLog(logger: logger) : nil
        let trimmer = MemoryTrimmer()
        httpConfiguration.accessLog = { record in
            trimmer.noteExchange(bytes: record.bytes + record.requestBytes)
            metrics.record(record)
            accessLog?.record(record)
        }
        let httpLogger = logger
        let httpBox = self.httpBox
        let metricsStore = store
        context.metricsText = {
            let stats = httpBox.value?.stats ?? HTTPServerStats()
            return metrics.render(http: stats, streams: hub.openStreams, eventsDelivered: hub.eventsDelivered, streamsEnded: hub.streamsEnded,
                                  readCache: readCache.stats, storageFull: metricsStore.isStorageFull,
                                  memoryTrims: trimmer.trims, databaseBytes: metricsStore.storageBytes() ?? 0)
        }
        http = HTTPServer(configuration: httpConfiguration, handler: Router(context: context), log: { message in
            httpLogger.info("\(message)")
        })
        httpBox.value = http
    }

    /// Logs and counts what the store says about space on the data volume.
    static func report(_ event: StorageEvent, logger: Logger, metrics: ServerMetrics) {
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
            store.close()
            throw .listen(host: configuration.host, port: configuration.port, reason: "\(error)")
        }
        let shownHost = configuration.host.contains(":") ? "[\(configuration.host)]" : configuration.host
        startHousekeeping()
        triggers?.start(databaseHost: "\(shownHost):\(port)")
        logger.notice("listening on http://\(shownHost):\(port)")
        return port
    }

    /// Stream keep-alives and expiry, revocation checks for open streams, change-log trims.
    private func startHousekeeping() {
        let (store, authenticator) = (self.store, authContext.authenticator)
        listens.startSweeps(revocationCheckEvery: configuration.streamRevocationCheckInterval, on: authContext.work) { uid, issuedAt in
            authenticator.isStillValid(uid: uid, issuedAt: issuedAt)
        }
        timers.withLock { timers in
            timers.append(Self.timer(every: configuration.store.changeLogTrimInterval, on: DispatchQueue.global(qos: .utility)) {
                store.trimChangeLog()
            })
            if store.isShared {
                // Several nodes: the onDisconnect operations of nodes whose lease expired
                // run here, and a key rotated on another node signs here too.
                // This check also tells the log when the database stops and starts answering
                // (once each way, StoreOutageLog), rather than failing every time.
                let (ledger, keys, logger) = (self.ledger, authContext.service.keys, logger)
                let outages = StoreOutageLog(logger: logger, clock: WallClock.milliseconds)
                timers.append(Self.timer(every: Engines.orphanCheckInterval, on: DispatchQueue.global(qos: .utility)) {
                    outages.run("cannot read the onDisconnect operations of stopped nodes") {
                        let ran = try ledger.runLeftovers()
                        if ran > 0 { logger.info("ran \(ran) onDisconnect operations of connections whose node stopped") }
                    }
                })
                timers.append(Self.timer(every: Engines.keyReloadInterval, on: authContext.work) { keys.reload() })
            }
        }
    }

    private static func timer(every seconds: Double, on queue: DispatchQueue, _ body: @escaping @Sendable () -> Void) -> DispatchSourceTimer {
        let timer = DispatchSource.makeTimerSource(queue: queue)
        let nanos = max(1_000_000, Int(seconds * 1e9))
        timer.schedule(deadline: .now() + .nanoseconds(nanos), repeating: .nanoseconds(nanos), leeway: .nanoseconds(nanos / 10))
        timer.setEventHandler(handler: body)
        timer.activate()
        return timer
    }

    static func isLoopback(_ host: String) -> Bool {
        let bare = host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host
        return bare == "::1" || bare.hasPrefix("127.") || bare == "localhost"
    }

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
            return true
        } catch {
            logger.error("rules NOT reloaded, keeping the previous rules: \(error)")
            return false
        }
    }

    /// Re-reads the triggers file (on `SIGHUP`); an invalid file keeps the running triggers.
    @discardableResult
    public func reloadTriggers() -> Bool {
        guard let triggers, let path = configuration.triggersPath else { return true }
        do {
            try triggers.reload(path: path)
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
        await http.shutdown(gracePeriod: configuration.shutdownGracePeriod)
        triggers?.close()
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
