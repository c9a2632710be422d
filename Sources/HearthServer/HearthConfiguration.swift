import HearthAccounts
import HearthHTTP
import HearthStore
import HearthStreams

/// Everything `hearth serve` can be told. Defaults follow docs/design.md §1: loopback only,
/// port 9000 (the Firebase database emulator's), data in ./hearth-data, rules from
/// ./rules.json.
public struct HearthConfiguration: Sendable {
    static let defaultHost = "127.0.0.1"
    static let defaultPort = 9000
    static let defaultDataDirectory = "./hearth-data"
    static let defaultRulesPath = "./rules.json"
    /// How long in-flight requests get to finish after SIGTERM/SIGINT before connections
    /// are closed anyway.
    static let defaultShutdownGracePeriod = 10.0

    public var host = HearthConfiguration.defaultHost
    public var port = HearthConfiguration.defaultPort
    public var dataDirectory = HearthConfiguration.defaultDataDirectory
    public var rulesPath = HearthConfiguration.defaultRulesPath
    /// The triggers file (docs/triggers.md); nil: no triggers.
    var triggersPath: String? = nil
    /// Service-account JSON files whose keys may take admin tokens at `/oauth2/v4/token`.
    public var adminServiceAccounts: [String] = []
    var shutdownGracePeriod = HearthConfiguration.defaultShutdownGracePeriod
    public var store = StoreOptions()
    /// Where the data lives (`--store`): empty for `sqlite:` in `dataDirectory`.
    public var storeURL = ""
    /// How long a shared store's database is tried at start before giving up, seconds.
    var storeStartupWaitSeconds = Engines.defaultStartupWaitSeconds
    /// The storage engines `storeURL` may name (the composition root's list; the first is
    /// the default).
    public var engines: [any EngineFactory] = Engines.all
    /// `storeURL` parsed.
    public func storeLocation() throws(StoreLocation.ParseError) -> StoreLocation {
        try StoreLocation(parsing: storeURL, defaultDirectory: dataDirectory, engines: engines)
    }
    public var limits = HTTPLimits()
    public var auth = AuthSettings()
    public var streams = StreamOptions()
    /// Namespaces the client SDKs may name (`/.ws?ns=`) for the default namespace; empty: any.
    public var namespaces: [String] = []
    /// The namespaces file (docs/namespaces.md): the other databases this server
    /// holds, each with its rules file; nil: only the default one.
    public var namespacesFile: String? = nil
    /// Per-connection bounds of the wire protocol (`/.ws`).
    public var wire = WireSessionLimits()
    /// Logging: level, format, access log.
    public var logging = LoggingSettings()
    /// Peer addresses whose `X-Forwarded-For` / `X-Forwarded-Proto` are believed.
    public var trustedProxies: [String] = []
    /// The admin console at `/console/`: `on`, `off`, or `auto` (on unless
    /// `trustedProxies` are set, i.e. unless Hearth is behind a public proxy).
    public var console = "auto"
    /// A console session unused this long ends.
    public var consoleIdleSeconds = ConsoleAccounts.defaultIdleSeconds

    /// Whether `/console/` is served, and which setting decided it.
    var consoleSwitch: ConsoleSwitch { ConsoleSwitch(console: console, trustedProxies: trustedProxies) }
    /// Whether `/console/` is served.
    var consoleEnabled: Bool { consoleSwitch.isOn }
    /// I/O queues serving connections; nil: one per core. Not a serve setting: tests pin
    /// it to 1 to put every connection on one queue.
    public var ioQueueCount: Int? = nil
    /// A push's sends go to the kernel a ring at a time (io_uring) where it allows it.
    public var batchedSends = true
    /// Count rule evaluations for `/.inspect/coverage` (always in emulator mode).
    public var recordRulesCoverage = false
    /// Whether the namespaces record rules coverage: asked for, or in emulator mode.
    var recordsRulesCoverage: Bool { recordRulesCoverage || auth.acceptEmulatorOwner }
    /// Bytes of rendered plain-read bodies kept (`ReadCache`); 0 turns the cache off.
    var readCacheBytes = ReadCache.defaultMaxBytes
    /// Seconds between checks that open streams' accounts were not disabled, deleted or
    /// revoked (`auth_revoked` when they were).
    public var streamRevocationCheckInterval = HearthConfiguration.defaultStreamRevocationCheckInterval
    static let defaultStreamRevocationCheckInterval = 5.0

    public init() {}
}

/// How the server logs.
public struct LoggingSettings: Sendable, Equatable {
    public var level = "info"
    /// One JSON object per line instead of human-readable lines.
    public var json = false
    /// One line per request.
    public var accessLog = true

    public init() {}
}
