import HearthAccounts
import HearthAuth
import HearthHTTP
import HearthJSON
import HearthStreams

/// Every setting of `hearth serve`, in one table: the flags' help, the environment
/// variables, the config file keys and `docs/configuration.md` all come from it (a test
/// checks that the doc matches).
public enum ServeSettings {
    public static let all: [Setting] = [
        Setting("host", env: "HEARTH_HOST", flag: "host", .string, default: HearthConfiguration.defaultHost,
                "Address to bind. Loopback by default; use 0.0.0.0 only behind a proxy or firewall.") { $0.host = $1.string },
        Setting("port", env: "HEARTH_PORT", flag: "port", .integer(0...65535), default: String(HearthConfiguration.defaultPort),
                "TCP port; 0 picks a free one, shown in the `listening on` log line.") { $0.port = $1.integer },
        Setting("dataDir", env: "HEARTH_DATA_DIR", flag: "data-dir", .string, default: HearthConfiguration.defaultDataDirectory,
                "Directory holding `hearth.sqlite` and the signing keys (with a PostgreSQL `store`, only local files).") { $0.dataDirectory = $1.string },
        Setting("store", env: "HEARTH_STORE", flag: "store", .string, default: "sqlite:<dataDir>",
                "Where the data lives: `sqlite:<directory>` (the default: one server per directory, enforced by a lock in it, `hearth.lock`) or `postgres://USER:PASSWORD@HOST:PORT/DATABASE` (several nodes on one PostgreSQL; `dataDir` then holds only local files). See docs/scaling.md.") {
            $0.storeURL = $1.string
        },
        Setting("storeStartupWaitSeconds", env: "HEARTH_STORE_STARTUP_WAIT_SECONDS", flag: nil, .integer(0...86_400),
                default: String(Engines.defaultStartupWaitSeconds),
                "With a PostgreSQL `store`: how long a starting node keeps trying to reach the database (down, starting, out of connections), with growing pauses, before it gives up; 0 tries once.") {
            $0.storeStartupWaitSeconds = $1.integer
        },
        Setting("rules", env: "HEARTH_RULES", flag: "rules", .string, default: HearthConfiguration.defaultRulesPath,
                "Rules file; the server refuses to start when it is missing or invalid.") { $0.rulesPath = $1.string },
        Setting("triggers", env: "HEARTH_TRIGGERS", flag: "triggers", .string, default: "(none)",
                "Triggers file (docs/triggers.md): database triggers delivered as CloudEvents to Cloud Functions code. A bad file stops the start with its line and reason; SIGHUP reloads it (a bad reload keeps the running set).") {
            $0.triggersPath = $1.string
        },
        Setting("namespacesFile", env: "HEARTH_NAMESPACES_FILE", flag: "namespaces-file", .string, default: "(none)",
                "Namespaces file (docs/namespaces.md): the other databases this server holds (`?ns=<name>`), each with its rules file; any name it does not list gets 404 (REST) or the protocol's shutdown (/.ws). A bad file stops the start.") {
            $0.namespacesFile = $1.string
        },
        Setting("synchronous", env: "HEARTH_SYNCHRONOUS", flag: "synchronous", .choice(["full", "normal"]), default: "full",
                "SQLite durability: `full` makes every acknowledged write survive power loss: a write is acknowledged after the sync of the log that follows its commit (one sync for every commit before it, off the writer's thread), so a slow disk makes acknowledgements late; reads and pushes see a commit up to one sync before it is on disk. `normal` syncs only at checkpoints: an acknowledged write survives a crash of Hearth, not a power loss.") {
            $0.store.synchronous = $1.string == "normal" ? .normal : .full
        },
        Setting("batchedSends", env: "HEARTH_BATCHED_SENDS", flag: nil, .boolean, default: "true",
                "A push to many listeners hands its sends to the kernel a ring at a time (io_uring: one system call for up to \(HTTPServer.sendRingCapacity) connections) where the kernel allows it; where it does not (`kernel.io_uring_disabled`, a container's seccomp filter such as Docker's default), or with `false`, one `send()` per connection. The start-up log says which.") {
            $0.batchedSends = $1.boolean
        },
        Setting("logLevel", env: "HEARTH_LOG_LEVEL", flag: "log-level",
                .choice(["trace", "debug", "info", "notice", "warning", "error", "critical"]), default: "info",
                "Least severe level logged.") { $0.logging.level = $1.string },
        Setting("logFormat", env: "HEARTH_LOG_FORMAT", flag: "log-format", .choice(["human", "json"]), default: "human",
                "`human` lines, or one JSON object per line.") { $0.logging.json = $1.string == "json" },
        Setting("accessLog", env: "HEARTH_ACCESS_LOG", flag: nil, .boolean, default: "true",
                "One log line per request (method, path without query, status, bytes, duration, request id, client address).") {
            $0.logging.accessLog = $1.boolean
        },
        Setting("customTokenServiceAccounts", env: "HEARTH_CUSTOM_TOKEN_SERVICE_ACCOUNTS", flag: nil, .list, default: "(none)",
                "Service-account JSON files (comma-separated in the variable) whose keys may sign custom tokens, as firebase-admin's `create_custom_token` does; Hearth's own (`hearth token --custom`) are always trusted.") {
            $0.auth.customTokenServiceAccounts = $1.list
        },
        Setting("adminServiceAccounts", env: "HEARTH_ADMIN_SERVICE_ACCOUNTS", flag: "admin-service-accounts", .list, default: "(none)",
                "Service-account JSON files (comma-separated) whose keys may take admin tokens at `/oauth2/v4/token`, as firebase-admin's `credentials.Certificate` does with `token_uri` pointing there (docs/triggers.md). A file Hearth cannot use stops the start.") {
            $0.adminServiceAccounts = $1.list
        },
        Setting("idpProviders", env: "HEARTH_IDP_PROVIDERS", flag: "idp-providers", .string, default: "(none)",
                "Identity providers file (docs/api.md, Identity providers): Google, Apple, OpenID Connect issuers and Firebase projects whose ID tokens sign users in (`accounts:signInWithIdp`). A bad file stops the start.") {
            $0.auth.identityProvidersPath = $1.string
        },
        Setting("consoleEnabled", env: "HEARTH_CONSOLE", flag: nil, .choice(["auto", "on", "off"]), default: "auto",
                "The admin console at `/console/`: `auto` serves it unless `trustedProxies` are set (behind a public proxy, turn it `on` deliberately). The start-up log says which and why; while it is off, `/console/` answers 404 saying so.") {
            $0.console = $1.string
        },
        Setting("consoleIdleSeconds", env: "HEARTH_CONSOLE_IDLE_SECONDS", flag: nil,
                .integer(Int(ConsoleAccounts.minimumIdleSeconds)...86_400), default: String(ConsoleAccounts.defaultIdleSeconds),
                "A console session unused this long ends (sessions also end \(ConsoleAccounts.absoluteSeconds / 3600) h after sign-in).") {
            $0.consoleIdleSeconds = Int64($1.integer)
        },
        Setting("smtpURL", env: "HEARTH_SMTP_URL", flag: nil, .string, default: "(none)",
                "SMTP server for email actions (password reset, verification): `smtp://127.0.0.1:2525` or `smtp+starttls://user:pass@host:587`. Without it no mail is sent.") {
            $0.auth.smtpURL = $1.string
        },
        Setting("mailFrom", env: "HEARTH_MAIL_FROM", flag: nil, .string, default: "(none)",
                "Sender address of the email actions' mail (needed with `smtpURL`).") { $0.auth.mailFrom = $1.string },
        Setting("actionLinkBase", env: "HEARTH_ACTION_LINK_BASE", flag: nil, .string, default: "(none)",
                "The page the mails link to, e.g. `https://app.example.com/auth/action`; Hearth appends `?mode=resetPassword&oobCode=...` (needed with `smtpURL`).") {
            $0.auth.actionLinkBase = $1.string
        },
        Setting("smtpCAFile", env: "HEARTH_SMTP_CA_FILE", flag: nil, .string, default: "(system)",
                "PEM file of the certificate authorities trusted for `smtp+starttls://` (else the system's).") { $0.auth.smtpCAFile = $1.string },
        Setting("trustedProxies", env: "HEARTH_TRUSTED_PROXIES", flag: nil, .list, default: "(none)",
                "Peer addresses whose `X-Forwarded-For`/`X-Forwarded-Proto` are believed (comma-separated in the variable).") {
            $0.trustedProxies = $1.list
        },
        Setting("noAnonymousSignUp", env: "HEARTH_NO_ANONYMOUS_SIGN_UP", flag: "no-anonymous-sign-up", .boolean, default: "false",
                "Refuse anonymous sign-up.") { $0.auth.allowAnonymousSignUp = !$1.boolean },
        Setting("noEmailSignUp", env: "HEARTH_NO_EMAIL_SIGN_UP", flag: "no-email-sign-up", .boolean, default: "false",
                "Refuse email/password sign-up.") { $0.auth.allowEmailSignUp = !$1.boolean },
        Setting("minPasswordLength", env: "HEARTH_MIN_PASSWORD_LENGTH", flag: "min-password-length",
                .integer(1...AuthSettings.maximumPasswordLength), default: String(AuthSettings.defaultMinimumPasswordLength),
                "Shortest accepted password.") { $0.auth.minimumPasswordLength = $1.integer },
        Setting("projectId", env: "HEARTH_PROJECT_ID", flag: "project-id", .string, default: "hearth",
                "The `aud` of ID tokens and the tail of their `iss`.") { $0.auth.projectID = $1.string },
        Setting("signInAttemptsPerMinute", env: "HEARTH_SIGN_IN_ATTEMPTS_PER_MINUTE", flag: nil, .integer(1...1_000_000),
                default: String(AuthSettings.defaultSignInAttemptsPerMinute),
                "Sign-in and sign-up attempts per client address per minute, and sign-ups per email (then 429). Wrong passwords are slowed per account and address on top (docs/api.md).") {
            $0.auth.signInAttemptsPerMinute = $1.integer
        },
        Setting("recentSignInSeconds", env: "HEARTH_RECENT_SIGN_IN_SECONDS", flag: nil, .integer(1...AuthSettings.maximumRecentSignInSeconds),
                default: String(AuthSettings.defaultRecentSignInSeconds),
                "A password or email change needs an ID token from a sign-in at most this old (`auth_time`), else `CREDENTIAL_TOO_OLD_LOGIN_AGAIN`.") {
            $0.auth.recentSignInSeconds = Int64($1.integer)
        },
        Setting("userStatusCacheSeconds", env: "HEARTH_USER_STATUS_CACHE_SECONDS", flag: nil, .integer(0...3600),
                default: String(AuthSettings.defaultUserStatusCacheSeconds),
                "How long a user's disabled flag and revocation time are cached when checking tokens.") {
            $0.auth.userStatusCacheSeconds = Int64($1.integer)
        },
        Setting("acceptEmulatorOwner", env: "HEARTH_ACCEPT_EMULATOR_OWNER", flag: "accept-emulator-owner", .boolean, default: "false",
                "Treat `Authorization: Bearer owner` (Firebase emulator convention) as admin; Hearth must listen on loopback, and only requests straight from this machine (no proxy forwarding header) are honoured.") {
            $0.auth.acceptEmulatorOwner = $1.boolean
        },
        Setting("recordRulesCoverage", env: "HEARTH_RECORD_RULES_COVERAGE", flag: nil, .boolean, default: "false",
                "Count every rule evaluation for the rules coverage report (`/.inspect/coverage`, admins only; docs/rules.md). Always on in emulator mode (`acceptEmulatorOwner`).") {
            $0.recordRulesCoverage = $1.boolean
        },
        Setting("maxConnections", env: "HEARTH_MAX_CONNECTIONS", flag: nil, .integer(1...1_000_000),
                default: String(HTTPLimits.defaultMaxConnections), "Open connections at most (then 503).") {
            $0.limits.maxConnections = $1.integer
        },
        Setting("maxConnectionsPerAddress", env: "HEARTH_MAX_CONNECTIONS_PER_ADDRESS", flag: nil, .integer(1...1_000_000),
                default: String(HTTPLimits.defaultMaxConnectionsPerAddress),
                "Open connections per client address, the forwarded client's behind `trustedProxies` (then 429).") {
            $0.limits.maxConnectionsPerAddress = $1.integer
        },
        Setting("maxUnsentBytes", env: "HEARTH_MAX_UNSENT_BYTES", flag: nil, .integer((1 << 20)...(1 << 40)),
                default: String(HTTPLimits.defaultMaxUnsentBytes),
                "Response bytes waiting for slow readers, all connections together; larger responses then get 503.") {
            $0.limits.maxUnsentBytes = $1.integer
        },
        Setting("maxIncompleteBytes", env: "HEARTH_MAX_INCOMPLETE_BYTES", flag: nil, .integer((1 << 20)...(1 << 40)),
                default: String(HTTPLimits.defaultMaxIncompleteBytes),
                "Bytes held for requests and messages not answered yet, all connections together: still arriving (bodies, WebSocket fragments, wire chunks) or being handled (a body until its answer, wire requests waiting their turn); past it a connection holding over 64 KiB gets 503 or close 1013.") {
            $0.limits.maxIncompleteBytes = $1.integer
        },
        Setting("maxIncompleteBytesPerAddress", env: "HEARTH_MAX_INCOMPLETE_BYTES_PER_ADDRESS", flag: nil, .integer((1 << 20)...(1 << 40)),
                default: String(HTTPLimits.defaultMaxIncompleteBytesPerAddress),
                "The same bytes per client address; past it a connection of that address holding over 64 KiB gets 503 or close 1008.") {
            $0.limits.maxIncompleteBytesPerAddress = $1.integer
        },
        Setting("minBodyBytesPerSecond", env: "HEARTH_MIN_BODY_BYTES_PER_SECOND", flag: nil, .integer(0...(1 << 30)),
                default: String(HTTPLimits.defaultMinBodyBytesPerSecond),
                "Slowest average request-body rate after a 30 s grace (then 408); 0 turns it off.") {
            $0.limits.minBodyBytesPerSecond = $1.integer
        },
        Setting("maxStreams", env: "HEARTH_MAX_STREAMS", flag: nil, .integer(1...1_000_000),
                default: String(StreamOptions.defaultMaxStreams), "Open streams at most (then 503).") { $0.streams.maxStreams = $1.integer },
        Setting("maxStreamsPerAddress", env: "HEARTH_MAX_STREAMS_PER_ADDRESS", flag: nil, .integer(1...1_000_000),
                default: String(StreamOptions.defaultMaxStreamsPerAddress), "Open streams per client address (then 429).") {
            $0.streams.maxStreamsPerAddress = $1.integer
        },
        Setting("streamQueueBytes", env: "HEARTH_STREAM_QUEUE_BYTES", flag: nil, .integer(1024...(1 << 30)),
                default: String(StreamOptions.defaultMaxQueuedBytes), "Unsent bytes a slow stream reader may have waiting behind the event going out, before `cancel`.") {
            $0.streams.maxQueuedBytes = $1.integer
        },
        Setting("streamKeepAliveSeconds", env: "HEARTH_STREAM_KEEPALIVE_SECONDS", flag: nil, .number(0.01...3600),
                default: "30", "Seconds between `keep-alive` events on streams.") { $0.streams.keepAliveInterval = $1.number },
        Setting("streamRevocationCheckSeconds", env: "HEARTH_STREAM_REVOCATION_CHECK_SECONDS", flag: nil, .number(0.01...3600),
                default: "5", "Seconds between checks that open streams' accounts were not disabled, deleted or revoked.") {
            $0.streamRevocationCheckInterval = $1.number
        },
        Setting("readCacheBytes", env: "HEARTH_READ_CACHE_BYTES", flag: nil, .integer(0...(1 << 40)),
                default: String(ReadCache.defaultMaxBytes),
                "Bytes of rendered read bodies kept in memory for repeated plain GETs (0 turns the cache off).") {
            $0.readCacheBytes = $1.integer
        },
        Setting("changeLogRetention", env: "HEARTH_CHANGE_LOG_RETENTION", flag: nil, .integer(1...100_000_000),
                default: String(HearthConfiguration().store.changeLogRetention), "Change-log records kept for stream resume.") {
            $0.store.changeLogRetention = $1.integer
        },
        Setting("namespaces", env: "HEARTH_NAMESPACES", flag: nil, .list, default: "(any)",
                "Names (`ns`) of the default namespace, comma-separated; the client SDKs connecting with any other name that is not in `namespacesFile` get the protocol's shutdown. Empty: any name not in `namespacesFile` is the default namespace's.") {
            $0.namespaces = $1.list
        },
        Setting("wireMaxListens", env: "HEARTH_WIRE_MAX_LISTENS", flag: nil, .integer(1...1_000_000),
                default: String(WireSessionLimits.defaultMaxListens),
                "Listens one wire-protocol connection (/.ws) may hold (then `max_listens`); at most a quarter of `maxStreamsPerAddress`, so one connection never takes its address's whole budget.") { $0.wire.maxListens = $1.integer },
        Setting("wireMaxOnDisconnect", env: "HEARTH_WIRE_MAX_ON_DISCONNECT", flag: nil, .integer(0...1_000_000),
                default: String(WireSessionLimits.defaultMaxOnDisconnect),
                "onDisconnect operations one wire-protocol connection may queue (then `too_many_ondisconnect`).") {
            $0.wire.maxOnDisconnect = $1.integer
        },
        Setting("wireMaxOnDisconnectBytes", env: "HEARTH_WIRE_MAX_ON_DISCONNECT_BYTES", flag: nil, .integer(0...1_073_741_824),
                default: String(WireSessionLimits.defaultMaxOnDisconnectBytes),
                "Bytes of onDisconnect operations one wire-protocol connection may queue, as their records store them: each operation's JSON and its registrant's auth (then `too_many_ondisconnect`).") {
            $0.wire.maxOnDisconnectBytes = $1.integer
        },
        Setting("wireMaxOnDisconnectBytesPerAddress", env: "HEARTH_WIRE_MAX_ON_DISCONNECT_BYTES_PER_ADDRESS", flag: nil,
                .integer(0...1_099_511_627_776), default: String(WireSessionLimits.defaultMaxOnDisconnectBytesPerAddress),
                "The same over all the connections of one client address (then `too_many_ondisconnect`).") {
            $0.wire.maxOnDisconnectBytesPerAddress = $1.integer
        },
        Setting("wireMaxOnDisconnectBytesInAll", env: "HEARTH_WIRE_MAX_ON_DISCONNECT_BYTES_IN_ALL", flag: nil,
                .integer(0...1_099_511_627_776), default: String(WireSessionLimits.defaultMaxOnDisconnectBytesInAll),
                "The same over every connection of the server (then `too_many_ondisconnect`).") {
            $0.wire.maxOnDisconnectBytesInAll = $1.integer
        },
        Setting("wireMaxPendingRequests", env: "HEARTH_WIRE_MAX_PENDING_REQUESTS", flag: nil, .integer(1...1_000_000),
                default: String(WireSessionLimits.defaultMaxPendingRequests),
                "Requests one wire-protocol connection may have waiting behind the one being handled; past it the server stops reading from a WebSocket until it catches up (a long poll is closed with 1008).") {
            $0.wire.maxPendingRequests = $1.integer
        },
        Setting("wireMaxWaitingRequestBytes", env: "HEARTH_WIRE_MAX_WAITING_REQUEST_BYTES", flag: nil, .integer(0...1_073_741_824),
                default: String(WireSessionLimits.defaultMaxWaitingRequestBytes),
                "Bytes of requests one wire-protocol connection may have waiting behind the one being handled; past it the server stops reading from it until it catches up (a long poll's session ends past `longPollMaxPendingBytes` instead).") {
            $0.wire.maxWaitingRequestBytes = $1.integer
        },
        Setting("wireMaxAuthFailures", env: "HEARTH_WIRE_MAX_AUTH_FAILURES", flag: nil, .integer(0...1_000_000),
                default: String(WireSessionLimits.defaultMaxAuthFailures),
                "Failed auth attempts on one wire-protocol connection (then close 1008).") { $0.wire.maxAuthFailures = $1.integer },
        Setting("wireMaxBadMessages", env: "HEARTH_WIRE_MAX_BAD_MESSAGES", flag: nil, .integer(0...1_000_000),
                default: String(WireSessionLimits.defaultMaxBadMessages),
                "Malformed messages or unknown actions on one wire-protocol connection (then close 1008).") {
            $0.wire.maxBadMessages = $1.integer
        },
        Setting("longPollMaxSessions", env: "HEARTH_LONG_POLL_MAX_SESSIONS", flag: nil, .integer(1...10_000_000),
                default: String(LongPollLimits.defaultMaxSessions),
                "Long-poll sessions (/.lp, the JS SDK's fallback transport) open at once; a new one past it gets 503.") {
            $0.wire.longPoll.maxSessions = $1.integer
        },
        Setting("longPollMaxSessionsPerAddress", env: "HEARTH_LONG_POLL_MAX_SESSIONS_PER_ADDRESS", flag: nil, .integer(1...10_000_000),
                default: String(LongPollLimits.defaultMaxSessionsPerAddress),
                "Long-poll sessions open at once from one client address (the forwarded client's behind trustedProxies); a new one past it gets 429.") {
            $0.wire.longPoll.maxSessionsPerAddress = $1.integer
        },
        Setting("longPollMaxPendingBytes", env: "HEARTH_LONG_POLL_MAX_PENDING_BYTES", flag: nil, .integer(4096...1_073_741_824),
                default: String(LongPollLimits.defaultMaxPendingBytes),
                "Bytes one long-poll session may hold: messages waiting for a poll and parts of messages not whole yet (then the session ends, its onDisconnect operations run).") {
            $0.wire.longPoll.maxPendingBytes = $1.integer
        },
        Setting("longPollHoldSeconds", env: "HEARTH_LONG_POLL_HOLD_SECONDS", flag: nil, .number(0.1...24),
                default: String(Int(LongPollLimits.defaultPollHoldSeconds)), "Seconds an idle long poll is held before it is answered empty (under the SDK's 25 s).") {
            $0.wire.longPoll.pollHoldSeconds = $1.number
        },
        Setting("longPollIdleSeconds", env: "HEARTH_LONG_POLL_IDLE_SECONDS", flag: nil, .number(30...86_400),
                default: String(Int(LongPollLimits.defaultSessionIdleSeconds)), "Seconds a long-poll session may go without a poll held or received before it ends (its onDisconnect operations run).") {
            $0.wire.longPoll.sessionIdleSeconds = $1.number
        },
        Setting("maxNodesPerWrite", env: "HEARTH_MAX_NODES_PER_WRITE", flag: nil, .integer(1...100_000_000),
                default: String(HearthConfiguration().store.maxNodesPerWrite),
                "Stored nodes one write may write, and may replace or delete (then 413); every other write waits while one is applied.") {
            $0.store.maxNodesPerWrite = $1.integer
        },
        Setting("changeLogMaxAgeSeconds", env: "HEARTH_CHANGE_LOG_MAX_AGE_SECONDS", flag: nil, .integer(1...(10 * 365 * 86_400)),
                default: "604800", "Seconds a change-log record is kept at most.") { $0.store.changeLogMaxAge = Double($1.integer) },
        Setting("shutdownGraceSeconds", env: "HEARTH_SHUTDOWN_GRACE_SECONDS", flag: nil, .number(0...3600),
                default: "10", "On SIGTERM/SIGINT: how long in-flight requests get to finish before connections are closed.") {
            $0.shutdownGracePeriod = $1.number
        },
    ]

    /// The environment variable naming the config file, and its flag.
    public static let configEnvironment = "HEARTH_CONFIG"

    /// Builds the configuration: for each setting the flag if given, else the environment
    /// variable, else the config file's member, else the default. Unknown config file keys
    /// are refused (a typo must not silently fall back to a default), and so is a bad value
    /// from any source, even one a higher source overrides.
    public static func resolve(
        flags: [String: String], environment: (String) -> String?, configFile: JSONValue?
    ) throws(SettingError) -> HearthConfiguration {
        var configuration = HearthConfiguration()
        var file: [JSONKey: JSONValue] = [:]
        if let configFile {
            guard case .object(let members) = configFile else { throw SettingError(message: "the config file must hold a JSON object") }
            let known = Set(all.map(\.key))
            if let unknown = members.keys.strings.sorted().first(where: { !known.contains($0) }) {
                throw SettingError(message: "the config file has an unknown setting \"\(unknown)\"; known: " + all.map(\.key).joined(separator: ", "))
            }
            file = members
        }
        for setting in all {
            // Every source given is checked, the ones a higher source overrides too: a bad
            // value in the config file must not wait, unnoticed, for the flag that hides it
            // to be dropped.
            var value: SettingValue?
            if let json = file[setting.key] {
                value = try setting.parse(json, from: "\"\(setting.key)\" in the config file")
            }
            if let text = environment(setting.environment), !text.isEmpty {
                value = try setting.parse(text, from: setting.environment)
            }
            if let flag = setting.flag, let text = flags[flag] {
                value = try setting.parse(text, from: "--\(flag)")
            }
            if let value { setting.apply(&configuration, value) }
        }
        return configuration
    }

    /// `docs/configuration.md`'s table.
    public static func markdownTable() -> String {
        var lines = ["| config file key | environment | flag | default | meaning |", "|---|---|---|---|---|"]
        for setting in all {
            let flag = setting.flag.map { "`--\($0)`" } ?? ""
            lines.append("| `\(setting.key)` | `\(setting.environment)` | \(flag) | `\(setting.defaultText)` | \(setting.summary) (\(setting.kind.expectation)) |")
        }
        return lines.joined(separator: "\n")
    }

    /// The list `hearth serve --help` shows.
    public static func helpText() -> String {
        all.map { setting in
            "  \(setting.environment) / \(setting.key)" + (setting.flag.map { " / --\($0)" } ?? "") + " (default \(setting.defaultText))"
        }.joined(separator: "\n")
    }
}
