import CoreMetrics
import HearthHTTP
import HearthTriggers
import Prometheus
import Synchronization

/// `GET /metrics` in Prometheus text format, through swift-metrics with the
/// swift-prometheus backend. The factory is passed to each metric explicitly: no global
/// `MetricsSystem.bootstrap`, so two servers in one process (tests) keep their own numbers.
///
/// Server-wide:
/// - `hearth_http_requests_total{route,status}` and `hearth_http_request_duration_seconds{route}`
///   (from every access record; streams count when they close); a request that reached a
///   database (`db.*` and `settings` routes) carries its `namespace` too;
/// - `hearth_open_connections`, `hearth_http_unsent_bytes`, `hearth_http_incomplete_bytes`,
///   the HTTP layer's refusals and `hearth_http_read_pauses_total` (WebSockets that stopped
///   reading while their requests waited);
/// - `hearth_sign_ins_total{result}` (password sign-ins: success or failure);
/// - `hearth_memory_trims_total` (heap given back after large exchanges, `MemoryTrimmer`);
/// - `hearth_namespaces` (databases served besides the default).
///
/// Per database, labelled `namespace` (`DatabaseMetrics`): commits, size and free space,
/// streams, read cache and triggers. Label values are names of open databases only, so at
/// most `NamespaceRegistry.maxNamespaces` + 1 of them; a name a client makes up never
/// becomes one.
final class ServerMetrics: Sendable {
    /// The `namespace` label of the default database.
    static let defaultLabel = "(default)"

    let registry = PrometheusCollectorRegistry()
    private let factory: PrometheusMetricsFactory
    /// A request series' labels, as a key made without building a string per request.
    private struct RequestKey: Hashable {
        let route: String
        let status: Int
        let namespace: String?
    }
    private let requestCounters = Mutex<[RequestKey: CoreMetrics.Counter]>([:])
    private let requestTimers = Mutex<[RequestKey: CoreMetrics.Timer]>([:])
    private let openConnections: CoreMetrics.Gauge
    private let signInSuccess: CoreMetrics.Counter
    private let signInFailure: CoreMetrics.Counter
    private let unsentBytes: CoreMetrics.Gauge
    private let unsentRefusals: CoreMetrics.Counter
    private let addressRefusals: CoreMetrics.Counter
    private let incompleteBytes: CoreMetrics.Gauge
    private let incompleteRefusals: CoreMetrics.Counter
    private let readPauses: CoreMetrics.Counter
    private let seenRefusals = Mutex<(unsent: Int, address: Int, incomplete: Int, pauses: Int)>((0, 0, 0, 0))
    private let memoryTrims: CoreMetrics.Counter
    private let seenTrims = Mutex<Int>(0)
    private let namespaceCount: CoreMetrics.Gauge
    private let databases = Mutex<[String: DatabaseMetrics]>([:])

    init() {
        var factory = PrometheusMetricsFactory(registry: registry)
        factory.defaultDurationHistogramBuckets = [
            .microseconds(100), .microseconds(250), .microseconds(500), .milliseconds(1), .milliseconds(2.5),
            .milliseconds(5), .milliseconds(10), .milliseconds(25), .milliseconds(50), .milliseconds(100),
            .milliseconds(250), .milliseconds(500), .seconds(1), .seconds(2.5), .seconds(10),
        ]
        factory.valueHistogramBuckets = ["hearth_write_batch_size": [1, 2, 4, 8, 16, 32, 64, 128, 256, 512]]
        self.factory = factory
        openConnections = Gauge(label: "hearth_open_connections", dimensions: [], factory: factory)
        namespaceCount = Gauge(label: "hearth_namespaces", dimensions: [], factory: factory)
        signInSuccess = Counter(label: "hearth_sign_ins_total", dimensions: [("result", "success")], factory: factory)
        signInFailure = Counter(label: "hearth_sign_ins_total", dimensions: [("result", "failure")], factory: factory)
        unsentBytes = Gauge(label: "hearth_http_unsent_bytes", dimensions: [], factory: factory)
        unsentRefusals = Counter(label: "hearth_http_unsent_refusals_total", dimensions: [], factory: factory)
        addressRefusals = Counter(label: "hearth_http_address_refusals_total", dimensions: [], factory: factory)
        incompleteBytes = Gauge(label: "hearth_http_incomplete_bytes", dimensions: [], factory: factory)
        incompleteRefusals = Counter(label: "hearth_http_incomplete_refusals_total", dimensions: [], factory: factory)
        readPauses = Counter(label: "hearth_http_read_pauses_total", dimensions: [], factory: factory)
        memoryTrims = Counter(label: "hearth_memory_trims_total", dimensions: [], factory: factory)
    }

    /// The `namespace` label of the database named `name` (empty: the default).
    static func label(ofNamespace name: String) -> String {
        name.isEmpty ? defaultLabel : name
    }

    /// The metrics of the database named `name` (empty: the default), made on first use.
    /// Called when a database opens, never with a name from a request.
    func database(_ name: String) -> DatabaseMetrics {
        let label = Self.label(ofNamespace: name)
        let factory = self.factory
        return databases.withLock { databases in
            if let existing = databases[label] { return existing }
            let made = DatabaseMetrics(label: label, factory: factory)
            databases[label] = made
            return made
        }
    }

    /// One answered request (or closed stream). `entry.tag` is the namespace label the
    /// router put on the answer of a request that reached a database.
    func record(_ entry: HTTPAccessRecord) {
        let route = Self.route(of: entry)
        let namespace = (route.hasPrefix("db.") || route == "settings") ? entry.tag : nil
        let key = RequestKey(route: route, status: entry.status, namespace: namespace)
        let counter = requestCounters.withLock { counters in
            if let existing = counters[key] { return existing }
            var dimensions = [("route", route), ("status", String(entry.status))]
            if let namespace { dimensions.append(("namespace", namespace)) }
            let made = Counter(label: "hearth_http_requests_total", dimensions: dimensions, factory: factory)
            counters[key] = made
            return made
        }
        counter.increment()
        if !entry.isStream {
            let timerKey = RequestKey(route: route, status: 0, namespace: namespace)
            let timer = requestTimers.withLock { timers in
                if let existing = timers[timerKey] { return existing }
                var dimensions = [("route", route)]
                if let namespace { dimensions.append(("namespace", namespace)) }
                let made = Timer(label: "hearth_http_request_duration_seconds", dimensions: dimensions, factory: factory)
                timers[timerKey] = made
                return made
            }
            timer.recordNanoseconds(Int64(clamping: entry.durationNanoseconds))
        }
        if route == "auth.signIn" {
            (entry.status == 200 ? signInSuccess : signInFailure).increment()
        }
    }

    /// The Prometheus text, with the scrape-time gauges and counters brought up to date:
    /// `databases` holds each open database's name (empty: the default) and what it reports.
    func render(http: HTTPServerStats, databases open: [(name: String, snapshot: DatabaseMetrics.Snapshot)],
                memoryTrims trims: Int = 0) -> [UInt8] {
        namespaceCount.record(max(0, open.count - 1))
        for (name, snapshot) in open { database(name).update(snapshot) }
        let newTrims = seenTrims.withLock { seen in
            defer { seen = trims }
            return trims - seen
        }
        if newTrims > 0 { memoryTrims.increment(by: newTrims) }
        openConnections.record(http.openConnections)
        unsentBytes.record(http.unsentBytes)
        incompleteBytes.record(http.incompleteBytes)
        let (newUnsent, newAddress, newIncomplete, newPauses) = seenRefusals.withLock { seen in
            defer { seen = (http.unsentRefusals, http.addressRefusals, http.incompleteRefusals, http.readPauses) }
            return (http.unsentRefusals - seen.unsent, http.addressRefusals - seen.address,
                    http.incompleteRefusals - seen.incomplete, http.readPauses - seen.pauses)
        }
        if newPauses > 0 { readPauses.increment(by: newPauses) }
        if newUnsent > 0 { unsentRefusals.increment(by: newUnsent) }
        if newAddress > 0 { addressRefusals.increment(by: newAddress) }
        if newIncomplete > 0 { incompleteRefusals.increment(by: newIncomplete) }
        return registry.emitToBuffer()
    }

    /// A small fixed set of route names (label values must not grow with the data).
    static func route(of entry: HTTPAccessRecord) -> String {
        let path = entry.path
        if entry.isStream { return "db.stream" }
        switch path {
        case "/healthz", "/readyz": return "health"
        case "/metrics": return "metrics"
        case "/.well-known/jwks.json": return "auth.jwks"
        default: break
        }
        if path.hasPrefix("/.settings/") { return "settings" }
        if path.hasSuffix("accounts:signInWithPassword") { return "auth.signIn" }
        if path.hasSuffix("accounts:signUp") { return "auth.signUp" }
        if path == "/v1/token" || path.hasPrefix("/securetoken.googleapis.com/") { return "auth.token" }
        if path.hasPrefix("/v1/") || path.hasPrefix("/identitytoolkit.googleapis.com/") { return "auth.other" }
        switch entry.method {
        case "GET", "HEAD": return "db.read"
        case "OPTIONS": return "cors"
        default: return "db.write"
        }
    }
}
