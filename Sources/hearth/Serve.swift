import ArgumentParser
import Dispatch
import HearthJSON
import HearthServer
import HearthSystem
import Logging
#if canImport(Glibc)
import Glibc
#endif

/// `hearth serve`: run the server until SIGTERM or SIGINT.
struct Serve: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Serve the database over HTTP.",
        discussion: """
            Settings come from, highest first: flags, HEARTH_* environment variables, the JSON \
            config file (--config or HEARTH_CONFIG; an object keyed by the names below), \
            defaults. The server refuses to start on a missing or invalid rules file; SIGHUP \
            reloads it (an invalid file keeps the old rules), and the triggers file too \
            (--triggers; an invalid one keeps the running triggers). SIGTERM or SIGINT stop it \
            gracefully. Every setting (environment / config key / flag, default) — also in \
            docs/configuration.md:

            """ + ServeSettings.helpText()
    )

    @Option(help: "JSON config file (HEARTH_CONFIG); flags and environment variables win over it.")
    var config: String?

    @Option(help: "Address to bind (default 127.0.0.1; use 0.0.0.0 only behind a proxy or firewall).")
    var host: String?

    @Option(help: "Port to listen on (default 9000; 0 picks a free port, printed in the 'listening on' line).")
    var port: String?

    @Option(name: .customLong("data-dir"), help: "Directory holding the database file (default ./hearth-data).")
    var dataDir: String?

    @Option(help: "Where the data lives: sqlite:<directory> (default: --data-dir) or postgres://USER:PASSWORD@HOST:PORT/DATABASE for several nodes on one PostgreSQL (docs/scaling.md).")
    var store: String?

    @Option(help: "Rules file (default ./rules.json).")
    var rules: String?

    @Option(help: "Triggers file: database triggers delivered as CloudEvents (docs/triggers.md).")
    var triggers: String?
    @Option(name: .customLong("namespaces-file"), help: "Namespaces file: the other databases this server holds, each with its rules file (docs/namespaces.md).")
    var namespacesFile: String?
    @Option(help: "Service-account JSON files (comma-separated) whose keys may take admin tokens at /oauth2/v4/token (docs/triggers.md).")
    var adminServiceAccounts: String?
    @Option(help: "Identity providers file: Google, Apple, OpenID Connect issuers and Firebase projects whose ID tokens sign users in (docs/api.md).")
    var idpProviders: String?

    @Flag(name: .customLong("no-anonymous-sign-up"), help: "Refuse anonymous sign-up.")
    var noAnonymousSignUp = false

    @Flag(name: .customLong("no-email-sign-up"), help: "Refuse email/password sign-up.")
    var noEmailSignUp = false

    @Option(name: .customLong("min-password-length"), help: "Shortest accepted password (default 6).")
    var minPasswordLength: String?

    @Option(name: .customLong("project-id"), help: "The audience of ID tokens (default 'hearth').")
    var projectID: String?

    @Flag(name: .customLong("accept-emulator-owner"),
          help: "Accept 'Authorization: Bearer owner' (Firebase emulator convention) as an admin credential; loopback only.")
    var acceptEmulatorOwner = false

    @Option(help: "SQLite synchronous mode: full (default; every acknowledged write survives power loss) or normal.")
    var synchronous: String?

    @Option(name: .customLong("log-level"), help: "trace, debug, info (default), notice, warning, error or critical.")
    var logLevel: String?

    @Option(name: .customLong("log-format"), help: "human (default) or json (one object per line).")
    var logFormat: String?

    /// The flags given, by their long names, as text for the settings table.
    var givenFlags: [String: String] {
        var flags: [String: String] = [:]
        flags["host"] = host
        flags["port"] = port
        flags["data-dir"] = dataDir
        flags["rules"] = rules
        flags["triggers"] = triggers
        flags["namespaces-file"] = namespacesFile
        flags["admin-service-accounts"] = adminServiceAccounts
        flags["idp-providers"] = idpProviders
        flags["store"] = store
        flags["min-password-length"] = minPasswordLength
        flags["project-id"] = projectID
        flags["synchronous"] = synchronous
        flags["log-level"] = logLevel
        flags["log-format"] = logFormat
        if noAnonymousSignUp { flags["no-anonymous-sign-up"] = "true" }
        if noEmailSignUp { flags["no-email-sign-up"] = "true" }
        if acceptEmulatorOwner { flags["accept-emulator-owner"] = "true" }
        return flags
    }

    /// Settings errors are usage errors: reported with this command's usage.
    func validate() throws {
        _ = try configuration()
    }

    func configuration() throws -> HearthConfiguration {
        do {
            return try resolve(Environment())
        } catch {
            throw Tool.usageError(error)
        }
    }

    func run() async throws {
        // Before anything is written: a write to standard error, a socket or a pipe whose
        // reader is gone (a log collector that stopped, `hearth serve 2>&1 | head`) is then
        // an EPIPE error, not a signal that ends the server, also while it is starting (the
        // HTTP server ignores SIGPIPE too, but only once it starts listening).
        Syscall.ignoreSIGPIPE()
        let configuration = try configuration()
        let level = Logger.Level(rawValue: configuration.logging.level) ?? .info
        let json = configuration.logging.json
        let output = LogOutput(droppedNotice: { count in
            HearthLogHandler.line(label: "hearth", level: .warning,
                                  message: "\(count) log lines dropped: standard error took none while \(LogOutput.maxHeldBytes) bytes of them waited",
                                  fields: [], json: json)
        })
        defer { output.flush() }
        LoggingSystem.bootstrap { label in
            var handler = HearthLogHandler(label: label, json: json, output: output)
            handler.logLevel = level
            return handler
        }
        let logger = Logger(label: "hearth")
        let service: HearthService
        let signals: SignalWaiter
        do {
            // Access lines go straight into the buffer, formatted as the handler would.
            let label = logger.label
            var accessLogSink: AccessLogSink?
            if level <= .info {
                accessLogSink = { (line: AccessLogLine) in
                    output.append(HearthLogHandler.line(label: label, level: .info, message: line.message, fields: line.fields, json: json),
                                  urgent: false)
                }
            }
            service = try HearthService(configuration: configuration, logger: logger, accessLogSink: accessLogSink)
            // Before listening: SIGTERM may come the moment "listening on" is logged.
            signals = SignalWaiter(for: [SIGTERM, SIGINT], onHangup: {
                service.reloadRules()
                service.reloadTriggers()
            })
            try service.start()
        } catch {
            logger.critical("\(error)")
            output.flush()
            throw ExitCode(1)
        }
        let signal = await signals.next()
        logger.info("received signal \(signal)")
        await service.shutdown()
        output.flush()
    }

    /// Flag, else environment variable, else config file, else default.
    func resolve(_ environment: Environment) throws -> HearthConfiguration {
        var file: JSONValue?
        if let path = config ?? environment[ServeSettings.configEnvironment] {
            let text = try RulesLoader.readText(path)
            do {
                file = try JSONParser.parse(Array(text.utf8))
            } catch {
                throw ValidationError("config file \(path) is not valid JSON: \(error)")
            }
        }
        return try ServeSettings.resolve(flags: givenFlags, environment: { environment[$0] }, configFile: file)
    }
}
