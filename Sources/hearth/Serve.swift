import ArgumentParser
import Dispatch
import HearthServer
import Logging
#if canImport(Glibc)
import Glibc
#endif

/// `hearth serve`: run the server until SIGTERM or SIGINT.
struct Serve: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Serve the database over HTTP.",
        discussion: """
            Every option can also be set by an environment variable (HEARTH_HOST, HEARTH_PORT,
            HEARTH_DATA_DIR, HEARTH_RULES, HEARTH_SYNCHRONOUS, HEARTH_LOG_LEVEL); a flag wins
            over the variable, the variable over the default. The server refuses to start on a
            missing or invalid rules file; SIGHUP reloads it (an invalid file keeps the old
            rules). SIGTERM or SIGINT stop it gracefully.
            """
    )

    @Option(help: "Address to bind (default 127.0.0.1; use 0.0.0.0 only behind a proxy or firewall).")
    var host: String?

    @Option(help: "Port to listen on (default 9000; 0 picks a free port, printed in the 'listening on' line).")
    var port: Int?

    @Option(name: .customLong("data-dir"), help: "Directory holding the database file (default ./hearth-data).")
    var dataDir: String?

    @Option(help: "Rules file (default ./rules.json).")
    var rules: String?

    @Flag(name: .customLong("no-anonymous-sign-up"), help: "Refuse anonymous sign-up (HEARTH_NO_ANONYMOUS_SIGN_UP=1).")
    var noAnonymousSignUp = false

    @Flag(name: .customLong("no-email-sign-up"), help: "Refuse email/password sign-up (HEARTH_NO_EMAIL_SIGN_UP=1).")
    var noEmailSignUp = false

    @Option(name: .customLong("min-password-length"), help: "Shortest accepted password (default 6).")
    var minPasswordLength: Int?

    @Option(name: .customLong("project-id"), help: "The audience of ID tokens (default 'hearth').")
    var projectID: String?

    @Flag(name: .customLong("accept-emulator-owner"),
          help: "Accept 'Authorization: Bearer owner' (Firebase emulator convention) as an admin credential; loopback only (HEARTH_ACCEPT_EMULATOR_OWNER=1).")
    var acceptEmulatorOwner = false

    @Option(help: "SQLite synchronous mode: full (default; every acknowledged write survives power loss) or normal.")
    var synchronous: String?

    @Option(name: .customLong("log-level"), help: "trace, debug, info (default), notice, warning, error or critical.")
    var logLevel: String?

    func validate() throws {
        if let port, !(0...65535).contains(port) { throw ValidationError("--port must be between 0 and 65535") }
        if let synchronous, !["full", "normal"].contains(synchronous.lowercased()) {
            throw ValidationError("--synchronous must be 'full' or 'normal'")
        }
        if let logLevel, Logger.Level(rawValue: logLevel.lowercased()) == nil {
            throw ValidationError("--log-level must be one of trace, debug, info, notice, warning, error, critical")
        }
    }

    func run() async throws {
        let environment = Environment()
        let level = Logger.Level(rawValue: (logLevel ?? environment["HEARTH_LOG_LEVEL"] ?? "info").lowercased()) ?? .info
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = level
            return handler
        }
        let logger = Logger(label: "hearth")
        let configuration = try resolve(environment)
        let service: HearthService
        do {
            service = try HearthService(configuration: configuration, logger: logger)
            try service.start()
        } catch {
            logger.critical("\(error)")
            throw ExitCode(1)
        }
        let signal = await SignalWaiter.wait(for: [SIGTERM, SIGINT], onHangup: { service.reloadRules() })
        logger.info("received signal \(signal)")
        await service.shutdown()
    }

    /// Flag, else environment variable, else default.
    func resolve(_ environment: Environment) throws -> HearthConfiguration {
        var configuration = HearthConfiguration()
        configuration.host = host ?? environment["HEARTH_HOST"] ?? configuration.host
        if let port {
            configuration.port = port
        } else if let text = environment["HEARTH_PORT"] {
            guard let value = Int(text), (0...65535).contains(value) else {
                throw ValidationError("HEARTH_PORT must be a port number")
            }
            configuration.port = value
        }
        configuration.dataDirectory = dataDir ?? environment["HEARTH_DATA_DIR"] ?? configuration.dataDirectory
        configuration.rulesPath = rules ?? environment["HEARTH_RULES"] ?? configuration.rulesPath
        configuration.auth.allowAnonymousSignUp = !(noAnonymousSignUp || environment.flag("HEARTH_NO_ANONYMOUS_SIGN_UP"))
        configuration.auth.allowEmailSignUp = !(noEmailSignUp || environment.flag("HEARTH_NO_EMAIL_SIGN_UP"))
        if let length = minPasswordLength ?? environment["HEARTH_MIN_PASSWORD_LENGTH"].flatMap(Int.init) {
            guard (1...AuthSettings.maximumPasswordLength).contains(length) else { throw ValidationError("--min-password-length out of range") }
            configuration.auth.minimumPasswordLength = length
        }
        if let text = environment["HEARTH_SIGN_IN_ATTEMPTS_PER_MINUTE"] {
            guard let limit = Int(text), limit > 0 else { throw ValidationError("HEARTH_SIGN_IN_ATTEMPTS_PER_MINUTE must be a positive number") }
            configuration.auth.signInAttemptsPerMinute = limit
        }
        if let text = environment["HEARTH_USER_STATUS_CACHE_SECONDS"] {
            guard let seconds = Int64(text), seconds >= 0 else { throw ValidationError("HEARTH_USER_STATUS_CACHE_SECONDS must be a whole number") }
            configuration.auth.userStatusCacheSeconds = seconds
        }
        configuration.auth.projectID = projectID ?? environment["HEARTH_PROJECT_ID"] ?? configuration.auth.projectID
        configuration.auth.acceptEmulatorOwner = acceptEmulatorOwner || environment.flag("HEARTH_ACCEPT_EMULATOR_OWNER")
        if let value = try environment.positiveInt("HEARTH_MAX_CONNECTIONS") { configuration.limits.maxConnections = value }
        if let value = try environment.positiveInt("HEARTH_MAX_STREAMS") { configuration.streams.maxStreams = value }
        if let value = try environment.positiveInt("HEARTH_MAX_STREAMS_PER_ADDRESS") { configuration.streams.maxStreamsPerAddress = value }
        if let value = try environment.positiveInt("HEARTH_STREAM_QUEUE_BYTES") { configuration.streams.maxQueuedBytes = value }
        if let value = try environment.positiveInt("HEARTH_STREAM_KEEPALIVE_SECONDS") { configuration.streams.keepAliveInterval = Double(value) }
        if let value = try environment.positiveInt("HEARTH_CHANGE_LOG_RETENTION") { configuration.store.changeLogRetention = value }
        if let value = try environment.positiveInt("HEARTH_CHANGE_LOG_MAX_AGE_SECONDS") { configuration.store.changeLogMaxAge = Double(value) }
        switch (synchronous ?? environment["HEARTH_SYNCHRONOUS"] ?? "full").lowercased() {
        case "full": configuration.store.synchronous = .full
        case "normal": configuration.store.synchronous = .normal
        default: throw ValidationError("HEARTH_SYNCHRONOUS must be 'full' or 'normal'")
        }
        return configuration
    }
}
