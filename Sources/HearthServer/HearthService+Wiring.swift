import Foundation
import HearthAccounts
import HearthHTTP
import HearthJSON
import HearthRules
import HearthAuth
import Dispatch
import HearthStore
import HearthStreams
import HearthSystem
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
    /// Another process listens on the port (`EADDRINUSE`).
    case portInUse(host: String, port: Int)
    case unsafe(String)
    case dataDirectory(DataDirectoryLockError)
    /// The namespaces file is unreadable or invalid.
    case namespaces(String)

    public var description: String {
        switch self {
        case .rules(let error):
            guard case .missing(let path) = error else { return error.description }
            return "\(error.description). Point --rules (HEARTH_RULES) at your rules file, or create \(path); "
                + #"the strictest start is {"rules": {".read": false, ".write": false}} (no client reads or writes; "#
                + "docs/rules.md), and 'hearth rules check \(path)' checks a file before a start"
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
        case .portInUse(let host, let port):
            return "cannot listen on \(host):\(port): port \(port) is already in use by another process. Stop that process, "
                + "or choose another port with --port (HEARTH_PORT); --port 0 picks a free one, shown in the 'listening on' line"
        case .unsafe(let reason):
            return reason
        case .dataDirectory(let error):
            return error.description
        case .namespaces(let reason):
            return reason
        }
    }
}

extension HearthService {
    static func refuseUnsafeSettings(_ configuration: HearthConfiguration) throws(StartupError) {
        if configuration.auth.acceptEmulatorOwner && !isLoopback(configuration.host) {
            throw .unsafe("--accept-emulator-owner makes `Bearer owner` an admin credential; it is allowed only on a loopback address, not \(configuration.host)")
        }
    }

    /// The rules file at `path`, compiled, and its text; a bad one stops the start.
    static func loadRules(_ path: String, logger: Logger) throws(StartupError) -> (RuleSet, String) {
        let loaded: (rules: RuleSet, text: String)
        do {
            loaded = try RulesLoader.loadWithText(path)
        } catch {
            throw .rules(error)
        }
        logger.info("rules loaded from \(path)")
        return (loaded.rules, loaded.text)
    }

    /// The triggers file, when one is set: a bad one stops the start.
    static func loadTriggers(_ configuration: HearthConfiguration) throws(StartupError) -> [TriggerDefinition]? {
        do {
            return try configuration.triggersPath.map { path throws(TriggerConfigError) in try TriggerConfig.load(path: path) }
        } catch {
            throw .triggers(error.description)
        }
    }

    /// The deliverers of the declared triggers over the engine's outbox.
    /// `instance`: the database instance the events name (`ce-instance`, and what a trigger's
    /// `instance` pattern matches): the project id for the default namespace, else the
    /// namespace's name.
    static func triggers(_ definitions: [TriggerDefinition]?, outbox: any TriggerOutbox, instance: String? = nil,
                                 configuration: HearthConfiguration, logger: Logger) -> TriggerDelivery? {
        guard let definitions else { return nil }
        let delivery = TriggerDelivery(outbox: outbox, origin: EventOrigin(instance: instance ?? configuration.auth.projectID, databaseHost: ""),
                                       logger: logger, clock: WallClock.milliseconds, runsSchedules: instance == nil)
        delivery.replace(definitions)
        logger.info("\(delivery.triggerNames.count) trigger(s) loaded from \(configuration.triggersPath ?? "")")
        return delivery
    }

    /// The namespaces file, when one is set: a bad one stops the start.
    static func loadNamespaces(_ configuration: HearthConfiguration) throws(StartupError) -> NamespacesFile? {
        do {
            return try configuration.namespacesFile.map { path throws(NamespacesFile.Invalid) in try NamespacesFile.load(path) }
        } catch {
            throw .namespaces(error.description)
        }
    }

    /// The registry over the default namespace and the file's others, opened now (a failure
    /// closes what was opened, the default's store too); in emulator mode it may create more.
    static func namespaces(_ file: NamespacesFile?, primary: Namespace, opener: NamespaceOpener, configuration: HearthConfiguration,
                           directoryLock: DataDirectoryLock?) throws(StartupError) -> NamespaceRegistry {
        var opened: [Namespace] = []
        for (name, rulesPath) in (file?.namespaces ?? [:]).sorted(by: { $0.key < $1.key }) {
            do {
                opened.append(try opener.open(name, rulesPath: rulesPath))
            } catch {
                for namespace in opened { namespace.close() }
                primary.close()
                directoryLock?.release()
                throw error
            }
        }
        var creator: (@Sendable (String, [UInt8]?) throws -> Namespace)? = nil
        if configuration.auth.acceptEmulatorOwner {
            creator = { @Sendable name, rules in
                do {
                    return try opener.create(name, rules: rules)
                } catch {
                    // The cause stays in the log; the client gets a 503 without it.
                    opener.logger.error("namespace \(name) could not be opened: \(error)")
                    throw error
                }
            }
        }
        return NamespaceRegistry(primary: primary, others: opened,
                                 defaultNames: NamespaceRegistry.defaultNames(configuration, fileDefault: file?.defaultName),
                                 strict: file != nil, creator: creator)
    }

    static func bind(_ configuration: HearthConfiguration) throws(StartupError) -> BoundSocket {
        do {
            return try BoundSocket(host: configuration.host, port: configuration.port)
        } catch let error as SystemError where error.errno == EADDRINUSE {
            throw .portInUse(host: configuration.host, port: configuration.port)
        } catch {
            throw .listen(host: configuration.host, port: configuration.port, reason: "\(error)")
        }
    }

    /// Where the data is and the engine that opens it.
    static func engine(for configuration: HearthConfiguration) throws(StartupError) -> (StoreLocation, any EngineFactory) {
        let location: StoreLocation
        do {
            location = try configuration.storeLocation()
        } catch {
            throw .storeSetting(error.description)
        }
        do {
            return (location, try configuration.engines.factory(for: location))
        } catch {
            throw .store(error)
        }
    }

    /// A node of a shared engine cannot know of another node's write before asking the
    /// database, so it keeps no read cache: every read is the database's.
    static func readCacheBytes(_ configuration: HearthConfiguration, engine: any EngineFactory) -> Int {
        engine.isShared ? 0 : configuration.readCacheBytes
    }

    /// The store's hooks besides the instance's own: commit timings and storage space to
    /// the metrics and the log, a shared engine's feed gaps and lease to `signals`.
    static func signals(_ signals: SharedEngineSignals, metrics: DatabaseMetrics, logger: Logger) -> DatabaseInstance.Signals {
        EngineHooks(
            observeCommit: metrics.recordCommit(writes:nanoseconds:),
            observeSync: metrics.recordWALSync(nanoseconds:),
            observeWrite: metrics.recordWrite(waited:answered:),
            observeStorage: { event in report(event, logger: logger, metrics: metrics) },
            onFeedGap: signals.feedGap(first:last:),
            onLeaseLost: signals.leaseLost,
            onLeaseRegained: signals.leaseRegained)
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
        case .syncFailed(let file, let errno):
            logger.critical("syncing \(file) failed (errno \(errno)): what the disk holds is unknown, so every write is refused and /readyz answers 503 until Hearth restarts; check the disk and the kernel log, then restart (SQLite recovers the log from what is on disk)")
        }
    }

    /// The opener of every namespace over the configured engine, and the data directory's
    /// lock (taken before any store is opened).
    /// `lock`: the data directory's lock when `lockServedDataDirectory` already took it;
    /// else it is taken here (creating the directory).
    static func opener(_ configuration: HearthConfiguration, wireSessions: WireSessionRegistry, metrics: ServerMetrics,
                       logger: Logger, lock taken: DataDirectoryLock? = nil) throws(StartupError) -> (NamespaceOpener, DataDirectoryLock?) {
        let (location, engine) = try Self.engine(for: configuration)
        var lock = taken
        if lock == nil { lock = try lockDataDirectory(of: location, engine: engine) }
        let storeOpening: NamespaceOpener.StoreOpening = { name, hooks throws(StartupError) in
            guard !name.isEmpty else {
                let store = try openStore(location, engine: engine, hooks: hooks, configuration: configuration, logger: logger)
                logger.info("data store: \(location)")
                return store
            }
            let own = engine.location(ofNamespace: name, beside: location)
            if let directory = engine.dataDirectory(of: own) {
                try? FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            }
            let store = try openStore(own, engine: engine, hooks: hooks, configuration: configuration, logger: logger)
            logger.info("namespace \(name): data store \(own)")
            return store
        }
        let opener = NamespaceOpener(configuration: configuration, openStore: storeOpening, clock: WallClock.milliseconds, dataDirectory: engine.dataDirectory(of: location),
                                     readCacheBytes: readCacheBytes(configuration, engine: engine), wireSessions: wireSessions,
                                     metrics: metrics, logger: logger)
        return (opener, lock)
    }

    /// The data directory's lock taken before the port is bound, when the directory has a
    /// lock file (a server has used it; a running one always has): a second server on the
    /// same directory and port is then refused naming the first one's pid, not the port.
    /// Nothing is created: with no lock file, nil, and the lock is taken after the bind
    /// (`opener`), so a serve that cannot listen leaves no trace.
    static func lockServedDataDirectory(_ configuration: HearthConfiguration) throws(StartupError) -> DataDirectoryLock? {
        let (location, engine) = try Self.engine(for: configuration)
        guard let directory = engine.dataDirectory(of: location),
              access(directory + "/" + DataDirectoryLock.fileName, F_OK) == 0 else { return nil }
        return try lockDataDirectory(of: location, engine: engine)
    }

    /// One server per data directory: a second one is refused before it opens the
    /// database, naming the first one's pid; the kernel drops the lock when it dies.
    static func lockDataDirectory(of location: StoreLocation, engine: any EngineFactory) throws(StartupError) -> DataDirectoryLock? {
        guard let directory = engine.dataDirectory(of: location) else { return nil }
        do {
            return try DataDirectoryLock.take(.server, directory: directory, create: true)
        } catch {
            throw .dataDirectory(error)
        }
    }

    static func openStore(_ location: StoreLocation, engine: any EngineFactory, hooks: EngineHooks,
                                  configuration: HearthConfiguration, logger: Logger) throws(StartupError) -> any StorageEngine {
        do {
            return try Engines.open(location, options: configuration.store, hooks: hooks, logger: logger,
                                    waitSeconds: configuration.storeStartupWaitSeconds, engines: configuration.engines)
        } catch {
            if engine.isShared, StartupBackoff.isTransient(error), let advice = engine.unreachableAdvice(configuration.store) {
                throw .storeUnreachable(reason: "\(error)", waitedSeconds: configuration.storeStartupWaitSeconds,
                                        advice: advice)
            }
            throw .store(error)
        }
    }

    /// Accounts, keys and mail (the caller closes `store` on a failure).
    static func auth(_ store: any StorageEngine, configuration: HearthConfiguration, logger: Logger) throws(StartupError) -> AuthContext {
        do {
            var settings = configuration.auth
            // Another node may disable a user or revoke their tokens at any moment: every
            // check reads the user's status from the database.
            if store.isShared { settings.userStatusCacheSeconds = 0 }
            settings.identityProviderKeyCache = configuration.dataDirectory
            let context = try AuthContext.make(engine: store, settings: settings)
                .withMail(configuration.auth, clock: WallClock.milliseconds) { message, outcome in
                    logMail(message, outcome, logger: logger)
                }
            context.service.identityProviders?.startBackgroundRefresh { failed in
                logger.warning("identity provider keys not refreshed (kept the cached ones): \(failed.joined(separator: ", "))")
            }
            return context
        } catch let error as AuthContext.MailSettingsError {
            throw .mail(error.description)
        } catch let error as IdentityProviderError {
            throw .identityProviders(error.description)
        } catch let error as AuthContext.ServiceAccountFileError {
            throw .serviceAccount(error.description)
        } catch {
            throw .keys("\(error)")
        }
    }

    /// What became of each email action's mail: logged without its address or link (the
    /// link holds the code).
    static func logMail(_ message: MailMessage, _ outcome: Mailer.Outcome, logger: Logger) {
        switch outcome {
        case .sent(let attempts): logger.info("email action mail sent (\(message.subject.split(separator: " ").prefix(2).joined(separator: " ")), \(attempts) attempt(s))")
        case .failed(let error, let attempts): logger.warning("email action mail not sent after \(attempts) attempt(s): \(error)")
        }
    }

    static func console(_ store: any StorageEngine, configuration: HearthConfiguration) -> ConsoleAccounts? {
        guard configuration.consoleEnabled else { return nil }
        return ConsoleAccounts(store: store.consoleRecords, hasher: PasswordHasher(), idleSeconds: configuration.consoleIdleSeconds,
                               clock: WallClock.milliseconds)
    }

    /// The wire protocol over one namespace's core; `namespaces`: the names it may be
    /// reached by (empty: any); unless given, the default namespace's names when
    /// `HEARTH_NAMESPACES` lists some (`NamespaceRegistry.defaultNames`), else any.
    static func wire(_ configuration: HearthConfiguration, database: Database, hub: StreamHub, auth: AuthContext,
                     ledger: OnDisconnectLedger, sessions: WireSessionRegistry, logger: Logger,
                     namespaces: Set<String>? = nil, longPolls: LongPollRegistry? = nil,
                     unsent: UnsentBytes = UnsentBytes()) -> WireContext {
        WireContext(database: database, hub: hub, authenticator: auth.authenticator, work: auth.work,
                    clock: WallClock.milliseconds, logger: logger,
                    limits: configuration.wire.fitted(toStreamsPerAddress: configuration.streams.maxStreamsPerAddress),
                    namespaces: namespaces ?? (configuration.namespaces.isEmpty ? []
                        : NamespaceRegistry.defaultNames(configuration, fileDefault: nil)), onDisconnect: ledger, sessions: sessions,
                    longPolls: longPolls, unsent: unsent)
    }

    /// The long-poll sessions of every namespace, within the wire protocol's limits.
    static func longPolls(_ configuration: HearthConfiguration, unsent: UnsentBytes) -> LongPollRegistry {
        LongPollRegistry(limits: configuration.wire.fitted(toStreamsPerAddress: configuration.streams.maxStreamsPerAddress).longPoll,
                         unsent: unsent)
    }

    /// The body of `GET /metrics`: the server's counters and every open database's.
    static func metricsText(metrics: ServerMetrics, httpBox: LateBox<HTTPServer>, trimmer: MemoryTrimmer,
                            namespaces: LateBox<NamespaceRegistry>) -> @Sendable () -> [UInt8] {
        {
            let stats = httpBox.value?.stats ?? HTTPServerStats()
            return metrics.render(http: stats, databases: namespaces.value?.metricsSnapshots ?? [], memoryTrims: trimmer.trims)
        }
    }

    static func httpServer(_ configuration: HearthConfiguration, router: Router, metrics: ServerMetrics,
                                   trimmer: MemoryTrimmer, logger: Logger, accessLogSink: AccessLogSink? = nil,
                                   unsent: UnsentBytes? = nil) -> HTTPServer {
        var httpConfiguration = HTTPServerConfiguration()
        httpConfiguration.host = configuration.host
        httpConfiguration.port = configuration.port
        httpConfiguration.limits = configuration.limits
        httpConfiguration.unsentBytes = unsent
        if let count = configuration.ioQueueCount { httpConfiguration.ioQueueCount = count }
        httpConfiguration.batchedSends = configuration.batchedSends
        httpConfiguration.trustedProxies = Set(configuration.trustedProxies)
        httpConfiguration.uncappedPaths = HealthEndpoint.paths
        let accessLog = configuration.logging.accessLog ? AccessLog(logger: logger, sink: accessLogSink) : nil
        httpConfiguration.accessLog = { record in
            trimmer.noteExchange(bytes: record.bytes + record.requestBytes)
            metrics.record(record)
            accessLog?.record(record)
        }
        // A stream's first value (or a large push) was built and freed long before the
        // stream closes and its access record comes.
        httpConfiguration.largeStreamUnit = { trimmer.noteExchange(bytes: $0) }
        return HTTPServer(configuration: httpConfiguration, handler: router, log: { message in logger.info("\(message)") })
    }
}

extension AuthContext {
    /// The account machinery over the engine's accounts, signing with `keys` (the engine's
    /// own unless given).
    static func make(engine: any StorageEngine, keys: (any SigningKeyStore)? = nil, settings: AuthSettings,
                     hasher: PasswordHasher = PasswordHasher(),
                     clock: @escaping @Sendable () -> Int64 = WallClock.milliseconds) throws -> AuthContext {
        let service = AccountService(accounts: engine.accountStore, keys: try KeyRing(store: keys ?? engine.signingKeys),
                                     settings: settings, hasher: hasher, clock: clock,
                                     serviceAccounts: try settings.customTokenServiceAccounts.map(Self.loadServiceAccount),
                                     identityProviders: try settings.identityProvidersPath.map {
                                         try IdentityProviders(file: $0, cacheDirectory: settings.identityProviderKeyCache,
                                                               fetchTimeoutSeconds: settings.identityProviderFetchTimeoutSeconds)
                                     })
        let seconds: @Sendable () -> Int64 = { clock() / 1000 }
        // Several nodes count attempts in the database, so a limit holds for them all.
        let shared = engine.limitCounters
        return AuthContext(
            service: service, authenticator: Authenticator(service: service, acceptEmulatorOwner: settings.acceptEmulatorOwner),
            pool: HashingPool(width: hashingPoolWidth, maxBacklog: hashingBacklog),
            work: DispatchQueue(label: "hearth.auth.work", attributes: .concurrent),
            perAddress: RateLimiter(limit: settings.signInAttemptsPerMinute, clock: seconds, shared: shared, name: "address"),
            perAccount: RateLimiter(limit: settings.signInAttemptsPerMinute, clock: seconds, shared: shared, name: "account"),
            throttle: SignInThrottle(clock: seconds, shared: shared))
    }
}

extension RESTContext {
    /// The REST adapter over a bare `Database` on `store` (an in-process router).
    init(store: any TreeStore, policy: any AccessPolicy, pushIDs: SharedPushIDGenerator, logger: Logger,
         auth: AuthContext, streams: StreamHub) {
        self.init(database: Database(store: store, policy: policy), pushIDs: pushIDs, logger: logger, auth: auth, streams: streams)
    }
}
