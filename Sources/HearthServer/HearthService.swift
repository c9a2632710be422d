import Foundation
import HearthAccounts
import HearthHTTP
import HearthJSON
import HearthRules
import HearthAuth
import Dispatch
import HearthSystem
import HearthStreams
import HearthMail
import HearthTriggers
import Logging
import Synchronization

/// The composition root: builds every namespace's database (`NamespaceOpener`, the
/// default one first: accounts live in its store), the server-wide parts, the router and
/// the HTTP server from one configuration, and runs them until `shutdown`.
public final class HearthService: Sendable {
    public let configuration: HearthConfiguration
    private let logger: Logger
    private let http: HTTPServer
    /// Bound in `init` before anything is created on disk, so a taken port leaves no trace.
    private let socket: BoundSocket
    /// Internal (not private): live tests mint the codes a reset mail would carry.
    let authContext: AuthContext
    /// The data directory's lock (an engine with a local directory), held until the
    /// stores are closed.
    private let directoryLock: DataDirectoryLock?
    /// The server's own timers (signing keys reloaded on a shared engine).
    private let timers = Mutex<[DispatchSourceTimer]>([])
    private let metrics: ServerMetrics
    /// Set once `http` exists (the metrics text reads its counters).
    private let httpBox = LateBox<HTTPServer>()
    /// The open long-poll sessions, ended first at shutdown (their held polls answered).
    private let longPolls: LongPollRegistry
    /// Every namespace, the default one included (internal: live tests reach a store).
    let namespaces: NamespaceRegistry
    /// The bytes every wire session's onDisconnect operations hold, by address and in all.
    let onDisconnectBudget: OnDisconnectBudget
    /// The server's `host:port` for namespaces opened after the start.
    private let databaseHost: LateBox<String>
    /// Milliseconds since the epoch.
    private let clock: @Sendable () -> Int64

    /// Subscribed locations below a write that the writer compares before and after it, at
    /// most; past it every one of them gets its event.
    public static let maxWatchedLocationsPerWrite = ListenAccess.maxWatchedLocationsPerWrite

    /// `accessLogSink`: where access lines go instead of `logger` (`hearth serve` formats
    /// them straight into its log buffer, `AccessLogSink`).
    public init(configuration: HearthConfiguration, logger: Logger, accessLogSink: AccessLogSink? = nil) throws(StartupError) {
        self.configuration = configuration
        self.logger = logger
        try Self.refuseUnsafeSettings(configuration)
        let rules = try Self.loadRules(configuration.rulesPath, logger: logger)
        let triggerDefinitions = try Self.loadTriggers(configuration)
        let namespacesFile = try Self.loadNamespaces(configuration)
        let adminGrant = try Self.adminGrant(configuration)
        // A served directory's lock before the port: a second server on both says the
        // directory is served (by which pid), the clearer of the two refusals.
        let servedLock = try Self.lockServedDataDirectory(configuration)
        // Bind before the store and the keys exist: a serve that cannot listen creates
        // neither the data directory nor anything in it.
        do throws(StartupError) {
            socket = try Self.bind(configuration)
        } catch {
            servedLock?.release()
            throw error
        }
        let metrics = ServerMetrics()
        self.metrics = metrics
        var opener: NamespaceOpener
        let budget = OnDisconnectBudget(perAddress: configuration.wire.maxOnDisconnectBytesPerAddress,
                                        total: configuration.wire.maxOnDisconnectBytesInAll)
        onDisconnectBudget = budget
        (opener, directoryLock) = try Self.opener(configuration, wireSessions: WireSessionRegistry(onDisconnectBudget: budget),
                                                  metrics: metrics, logger: logger, lock: servedLock)
        opener.triggerDefinitions = triggerDefinitions
        // One ledger of unsent bytes for the HTTP server and the long-poll outboxes, so
        // `maxUnsentBytes` bounds both.
        let unsent = UnsentBytes(limit: configuration.limits.maxUnsentBytes)
        let trimmer = MemoryTrimmer()
        let namespacesBox = LateBox<NamespaceRegistry>()
        let metricsText = Self.metricsText(metrics: metrics, httpBox: httpBox, trimmer: trimmer, namespaces: namespacesBox)
        let primary: Namespace
        let server: ServerParts
        do throws(StartupError) {
            (primary, server) = try opener.openDefault(rules: rules) { store throws(StartupError) in
                ServerParts(auth: try Self.auth(store, configuration: configuration, logger: logger),
                            console: Self.console(store, configuration: configuration), adminGrant: adminGrant,
                            metricsText: metricsText, longPolls: Self.longPolls(configuration, unsent: unsent), unsent: unsent)
            }
        } catch {
            directoryLock?.release()
            throw error
        }
        authContext = server.auth
        longPolls = server.longPolls
        opener.server = server
        databaseHost = opener.databaseHost
        clock = opener.clock
        namespaces = try Self.namespaces(namespacesFile, primary: primary, opener: opener, configuration: configuration,
                                         directoryLock: directoryLock)
        namespacesBox.value = namespaces
        http = Self.httpServer(configuration, router: Router(context: primary.context, namespaces: namespaces,
                                                                     consoleSwitch: configuration.consoleSwitch), metrics: metrics,
                               trimmer: trimmer, logger: logger, accessLogSink: accessLogSink, unsent: unsent)
        httpBox.value = http
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
            namespaces.closeAll()
            directoryLock?.release()
            throw .listen(host: configuration.host, port: configuration.port, reason: "\(error)")
        }
        let shownHost = configuration.host.contains(":") ? "[\(configuration.host)]" : configuration.host
        let databaseHost = "\(shownHost):\(port)"
        self.databaseHost.value = databaseHost
        for namespace in namespaces.all {
            namespace.start(Self.housekeeping(configuration: configuration, auth: authContext, logger: logger, clock: clock),
                            databaseHost: databaseHost)
        }
        if namespaces.primary.instance.isShared {
            // A key rotated on another node signs here too.
            let keys = authContext.service.keys
            timers.withLock { $0.append(DatabaseInstance.timer(every: Engines.keyReloadInterval, on: authContext.work) { keys.reload() }) }
        }
        // Before the listening line, which tells a watcher the start is complete.
        if configuration.auth.acceptEmulatorOwner {
            logger.warning("emulator mode (--accept-emulator-owner) is on: `Bearer owner` is an admin, and unsigned tokens are accepted, for clients on this machine (refused through a proxy and from web pages of other origins); never use it with data that matters")
        }
        logger.notice("\(configuration.consoleSwitch.logLine)")
        if let error = http.sendRingError, http.loopsWithRings > 0 {
            logger.notice("pushes: through io_uring on \(http.loopsWithRings) of \(http.loopCount) I/O loops, one send() per connection on the others: \(error)")
        } else if let error = http.sendRingError {
            logger.notice("pushes: one send() per connection, io_uring is unavailable: \(error)")
        } else if http.sendsThroughRings {
            logger.info("pushes: through io_uring, up to \(HTTPServer.sendRingCapacity) sends per system call")
        } else {
            logger.info("pushes: one send() per connection (batchedSends is false)")
        }
        logger.notice("listening on http://\(shownHost):\(port)")
        return port
    }

    /// One namespace's housekeeping: stream sweeps (revocations checked against the
    /// server's accounts), change-log trims and, on a shared engine, the onDisconnect
    /// operations of nodes whose lease expired.
    static func housekeeping(configuration: HearthConfiguration, auth: AuthContext, logger: Logger,
                             clock: @escaping @Sendable () -> Int64) -> DatabaseInstance.Housekeeping {
        // This check also tells the log when the database stops and starts answering
        // (once each way, StoreOutageLog), rather than failing every time.
        let outages = StoreOutageLog(logger: logger, clock: clock)
        return DatabaseInstance.Housekeeping(
            revocationCheckEvery: configuration.streamRevocationCheckInterval, queue: auth.work,
            isStillValid: auth.authenticator.isStillValid(uid:issuedAt:),
            changeLogTrimEvery: configuration.store.changeLogTrimInterval, orphanCheckEvery: Engines.orphanCheckInterval
        ) { result in
            outages.run("cannot read the onDisconnect operations of stopped nodes") {
                let ran = try result.get()
                if ran > 0 { logger.info("ran \(ran) onDisconnect operations of connections whose node stopped") }
            }
        }
    }

    static func isLoopback(_ host: String) -> Bool {
        LoopbackHost.containsAddress(host)
    }

    /// The identity providers of the providers file (for tests).
    var identityProviders: IdentityProviders? { authContext.service.identityProviders }

    /// Open streams of the default namespace (for tests and metrics).
    public var openStreams: Int { namespaces.primary.listens.hub.openStreams }

    /// Closes every stream and wire-protocol listen without a last event, so that their
    /// clients connect again and start over: what a node does when it missed changes
    /// (`EngineHooks.onFeedGap`), since it can no longer vouch for what it sent.
    public func startStreamsOver() {
        for namespace in namespaces.all { namespace.listens.hub.endAll(.reconnect) }
    }

    /// Re-reads every namespace's rules file and swaps its rules in atomically (on
    /// `SIGHUP`). An invalid or unreadable file keeps that namespace's current rules; the
    /// reason is logged. True when every one was reloaded.
    @discardableResult
    public func reloadRules() -> Bool {
        var reloaded = true
        for namespace in namespaces.all {
            do {
                try namespace.rulesSettings.reload()
                logger.info("rules reloaded from \(namespace.rulesSettings.path)\(namespace.inLog)")
            } catch {
                logger.error("rules NOT reloaded\(namespace.inLog), keeping the previous rules: \(error)")
                reloaded = false
            }
        }
        return reloaded
    }

    /// Re-reads the triggers file (on `SIGHUP`) for every namespace; an invalid file keeps
    /// the running triggers.
    @discardableResult
    public func reloadTriggers() -> Bool {
        guard let path = configuration.triggersPath else { return true }
        do {
            // The same file for every namespace: once it parsed, it parses for each.
            for namespace in namespaces.all { try namespace.triggers?.reload(path: path) }
            logger.info("triggers reloaded from \(path): \(namespaces.primary.triggers?.triggerNames.count ?? 0) trigger(s)")
            return true
        } catch {
            logger.error("triggers NOT reloaded, keeping the running ones: \(error)")
            return false
        }
    }

    /// Stops accepting, lets in-flight requests finish (up to the grace period), then
    /// commits queued writes and closes every database.
    public func shutdown() async {
        logger.info("shutting down")
        timers.withLock { timers in
            for timer in timers { timer.cancel() }
            timers = []
        }
        for namespace in namespaces.all { namespace.listens.stop() }
        longPolls.endAll()
        await http.shutdown(gracePeriod: configuration.shutdownGracePeriod)
        namespaces.closeAll()
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

// MARK: Construction (the pieces `HearthService.init` wires together)
