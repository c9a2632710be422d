import Foundation
import HearthAccounts
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

extension HearthService {
    static func refuseUnsafeSettings(_ configuration: HearthConfiguration) throws(StartupError) {
        if configuration.auth.acceptEmulatorOwner && !isLoopback(configuration.host) {
            throw .unsafe("--accept-emulator-owner makes `Bearer owner` an admin credential; it is allowed only on a loopback address, not \(configuration.host)")
        }
    }

    static func loadRules(_ configuration: HearthConfiguration, logger: Logger) throws(StartupError) -> (RulesAccessPolicy, String) {
        let loaded: (rules: RuleSet, text: String)
        do {
            loaded = try RulesLoader.loadWithText(configuration.rulesPath)
        } catch {
            throw .rules(error)
        }
        logger.info("rules loaded from \(configuration.rulesPath)")
        return (RulesAccessPolicy(rules: loaded.rules, logger: logger), loaded.text)
    }

    /// The triggers file (issue 27), when one is set: a bad one stops the start.
    static func loadTriggers(_ configuration: HearthConfiguration) throws(StartupError) -> [TriggerDefinition]? {
        do {
            return try configuration.triggersPath.map { path throws(TriggerConfigError) in try TriggerConfig.load(path: path) }
        } catch {
            throw .triggers(error.description)
        }
    }

    /// The deliverers of the declared triggers over the engine's outbox (issue 27).
    /// `instance`: the database instance the events name (`ce-instance`, and what a trigger's
    /// `instance` pattern matches): the project id for the default namespace, else the
    /// namespace's name.
    static func triggers(_ definitions: [TriggerDefinition]?, outbox: any TriggerOutbox, instance: String? = nil,
                                 configuration: HearthConfiguration, logger: Logger) -> TriggerDelivery? {
        guard let definitions else { return nil }
        let delivery = TriggerDelivery(outbox: outbox, origin: EventOrigin(instance: instance ?? configuration.auth.projectID, databaseHost: ""),
                                       logger: logger, clock: WallClock.milliseconds)
        delivery.replace(definitions)
        logger.info("\(delivery.triggerNames.count) trigger(s) loaded from \(configuration.triggersPath ?? "")")
        return delivery
    }

    /// The namespaces file (issue 28), when one is set: a bad one stops the start.
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
                primary.store.close()
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
    /// database, so it keeps no read cache: every read is the database's (issue 17).
    static func readCache(_ configuration: HearthConfiguration, engine: any EngineFactory) -> ReadCache {
        ReadCache(maxBytes: engine.isShared ? 0 : configuration.readCacheBytes)
    }

    static func hooks(listens: ListenAccess, signals: SharedEngineSignals, triggers: LateBox<TriggerDelivery>,
                              metrics: DatabaseMetrics, logger: Logger) -> EngineHooks {
        EngineHooks(
            watch: listens.watchedLocations(below:),
            observeCommit: metrics.recordCommit(writes:nanoseconds:),
            observeStorage: { event in report(event, logger: logger, metrics: metrics) },
            onCommit: { changes, view in
                listens.committed(changes, view: view)
                triggers.value?.committed(changes)  // wakes the deliverers whose patterns a change may match
            },
            onFeedGap: signals.feedGap(first:last:),
            onLeaseLost: signals.leaseLost,
            onLeaseRegained: signals.leaseRegained)
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

    /// The rules' history; a rules file changed while Hearth was stopped is a change of the rules too.
    static func rulesHistory(_ store: any StorageEngine, rulesText: String, logger: Logger) -> RulesHistory {
        let history = RulesHistory(records: store.consoleRecords, clock: WallClock.milliseconds, logger: logger)
        history.record(rulesText, by: .fileAtStartup)
        return history
    }

    /// Accounts, keys and mail; a failure closes `store`.
    static func auth(_ store: any StorageEngine, configuration: HearthConfiguration, logger: Logger) throws(StartupError) -> AuthContext {
        do {
            var settings = configuration.auth
            // Another node may disable a user or revoke their tokens at any moment: every
            // check reads the user's status from the database (issue 17).
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
            store.close()
            throw .mail(error.description)
        } catch let error as IdentityProviderError {
            store.close()
            throw .identityProviders(error.description)
        } catch let error as AuthContext.ServiceAccountFileError {
            store.close()
            throw .serviceAccount(error.description)
        } catch {
            store.close()
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

    /// The onDisconnect ledger; operations of wire sessions that were open when Hearth last
    /// stopped (a crash, a kill) run now, before anyone connects.
    static func onDisconnectLedger(_ store: any StorageEngine, database: Database, authenticator: Authenticator,
                                           logger: Logger) -> OnDisconnectLedger {
        let ledger = OnDisconnectLedger(records: store.onDisconnectRecords, database: database,
                                        isStillValid: authenticator.isStillValid(uid:issuedAt:))
        do {
            let ran = try ledger.runLeftovers()
            if ran > 0 { logger.info("ran \(ran) onDisconnect operations left by connections open when Hearth last stopped") }
        } catch {
            logger.error("cannot read the pending onDisconnect operations: \(error)")
        }
        return ledger
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

    /// Every change of the running rules: recorded, logged, and the open listens reviewed.
    /// `until`: the rules file read while `configuration.rulesPath` (where replacements go)
    /// does not exist yet (an emulator-made namespace's, until its first replacement).
    static func rulesSettings(_ configuration: HearthConfiguration, policy: RulesAccessPolicy, history: RulesHistory,
                                      listens: ListenAccess, store: any StorageEngine, logger: Logger,
                                      until fallbackPath: String? = nil) -> RulesSettings {
        RulesSettings(path: configuration.rulesPath, fallbackPath: fallbackPath, policy: policy, history: history) {
            logger.info("rules replaced through /.settings/rules.json")
            listens.reviewAccess(in: store)
        }
    }

    /// The body of `GET /metrics`.
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
        httpConfiguration.trustedProxies = Set(configuration.trustedProxies)
        httpConfiguration.uncappedPaths = HealthEndpoint.paths
        let accessLog = configuration.logging.accessLog ? AccessLog(logger: logger, sink: accessLogSink) : nil
        httpConfiguration.accessLog = { record in
            trimmer.noteExchange(bytes: record.bytes + record.requestBytes)
            metrics.record(record)
            accessLog?.record(record)
        }
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
                                         try IdentityProviders(file: $0, cacheDirectory: settings.identityProviderKeyCache)
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
