import HearthHTTP
import HearthJSON
import HearthRules
import HearthStore
import Logging

/// Why the server did not start. Descriptions are for the operator's terminal.
public enum StartupError: Error, CustomStringConvertible {
    case rules(RulesLoader.LoadError)
    case keys(String)
    case store(StoreError)
    case listen(host: String, port: Int, reason: String)

    public var description: String {
        switch self {
        case .rules(let error):
            return error.description
        case .keys(let reason):
            return "cannot open the signing keys: \(reason)"
        case .store(let error):
            return "cannot open the data store: \(error)"
        case .listen(let host, let port, let reason):
            return "cannot listen on \(host):\(port): \(reason)"
        }
    }
}

/// The composition root (DESIGN.md §2): builds the store, the access policy, the router and
/// the HTTP server from one configuration, and runs them until `shutdown`.
public final class HearthService: Sendable {
    public let configuration: HearthConfiguration
    private let logger: Logger
    private let store: SQLiteTreeStore
    private let http: HTTPServer
    private let policy: RulesAccessPolicy

    public init(configuration: HearthConfiguration, logger: Logger) throws(StartupError) {
        self.configuration = configuration
        self.logger = logger
        do {
            policy = RulesAccessPolicy(rules: try RulesLoader.load(configuration.rulesPath), logger: logger)
        } catch {
            throw .rules(error)
        }
        logger.info("rules loaded from \(configuration.rulesPath)")
        do {
            store = try SQLiteTreeStore(directory: configuration.dataDirectory, options: configuration.store)
        } catch {
            throw .store(error)
        }
        let auth: AuthContext
        do {
            auth = try AuthContext.make(store: store, dataDirectory: configuration.dataDirectory, settings: configuration.auth)
        } catch {
            store.close()
            throw .keys("\(error)")
        }
        let context = RESTContext(
            store: store, policy: policy, pushIDs: SharedPushIDGenerator(), logger: logger, auth: auth)
        var httpConfiguration = HTTPServerConfiguration()
        httpConfiguration.host = configuration.host
        httpConfiguration.port = configuration.port
        httpConfiguration.limits = configuration.limits
        let httpLogger = logger
        http = HTTPServer(configuration: httpConfiguration, handler: Router(context: context), log: { message in
            httpLogger.info("\(message)")
        })
    }

    /// Starts listening; returns the bound port and logs `listening on http://HOST:PORT`.
    @discardableResult
    public func start() throws(StartupError) -> Int {
        let port: Int
        do {
            port = try http.start()
        } catch {
            store.close()
            throw .listen(host: configuration.host, port: configuration.port, reason: "\(error)")
        }
        let shownHost = configuration.host.contains(":") ? "[\(configuration.host)]" : configuration.host
        logger.info("listening on http://\(shownHost):\(port)")
        return port
    }

    /// Re-reads the rules file and swaps the rules in atomically (on `SIGHUP`). An invalid
    /// or unreadable file keeps the current rules; the reason is logged. True on success.
    @discardableResult
    public func reloadRules() -> Bool {
        do {
            policy.replace(try RulesLoader.load(configuration.rulesPath))
            logger.info("rules reloaded from \(configuration.rulesPath)")
            return true
        } catch {
            logger.error("rules NOT reloaded, keeping the previous rules: \(error)")
            return false
        }
    }

    /// Stops accepting, lets in-flight requests finish (up to the grace period), then
    /// commits queued writes and closes the database.
    public func shutdown() async {
        logger.info("shutting down")
        await http.shutdown(gracePeriod: configuration.shutdownGracePeriod)
        store.close()
        logger.info("stopped")
    }
}
