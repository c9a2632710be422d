import CoreMetrics
import HearthHTTP
import HearthTriggers
import Prometheus
import Synchronization

/// `GET /metrics` in Prometheus text format (issue 7), through swift-metrics with the
/// swift-prometheus backend. The factory is passed to each metric explicitly: no global
/// `MetricsSystem.bootstrap`, so two servers in one process (tests) keep their own numbers.
///
/// - `hearth_http_requests_total{route,status}` and `hearth_http_request_duration_seconds{route}`
///   (from every access record; streams count when they close);
/// - `hearth_open_connections`, `hearth_open_streams`, `hearth_database_bytes` (the
///   database file and its write-ahead log; read at scrape time);
/// - `hearth_write_batch_size`, `hearth_commit_duration_seconds` (from the writer);
/// - `hearth_stream_events_total`, `hearth_streams_ended_total` (from the stream hub);
/// - `hearth_sign_ins_total{result}` (password sign-ins: success or failure);
/// - `hearth_read_cache_lookups_total{result}` (hit or miss), `hearth_read_cache_entries`,
///   `hearth_read_cache_bytes` (`ReadCache`, read at scrape time);
/// - `hearth_memory_trims_total` (heap given back after large exchanges, `MemoryTrimmer`);
/// - `hearth_storage_full_refusals_total` (writes refused for lack of space),
///   `hearth_storage_full` (1 while writes are being refused for lack of space);
/// - `hearth_trigger_*{trigger}` (database triggers: `TriggerMetrics`);
/// - `hearth_namespaces` (databases served besides the default), and per namespace
///   `hearth_namespace_database_bytes{namespace}` and `hearth_namespace_open_streams{namespace}`
///   (issue 28; the default namespace is `(default)`).
final class ServerMetrics: Sendable {
    let registry = PrometheusCollectorRegistry()
    private let factory: PrometheusMetricsFactory
    private let requestCounters = Mutex<[String: CoreMetrics.Counter]>([:])
    private let requestTimers = Mutex<[String: CoreMetrics.Timer]>([:])
    private let openConnections: CoreMetrics.Gauge
    private let openStreams: CoreMetrics.Gauge
    private let databaseBytes: CoreMetrics.Gauge
    private let batchSize: CoreMetrics.Recorder
    private let commitDuration: CoreMetrics.Timer
    private let eventsDelivered: CoreMetrics.Counter
    private let streamsEnded: CoreMetrics.Counter
    private let signInSuccess: CoreMetrics.Counter
    private let signInFailure: CoreMetrics.Counter
    private let seen = Mutex<(events: Int, ended: Int)>((0, 0))
    private let cacheHits: CoreMetrics.Counter
    private let cacheMisses: CoreMetrics.Counter
    private let cacheEntries: CoreMetrics.Gauge
    private let cacheBytes: CoreMetrics.Gauge
    private let seenCache = Mutex<(hits: Int, misses: Int)>((0, 0))
    private let unsentBytes: CoreMetrics.Gauge
    private let unsentRefusals: CoreMetrics.Counter
    private let addressRefusals: CoreMetrics.Counter
    private let incompleteBytes: CoreMetrics.Gauge
    private let incompleteRefusals: CoreMetrics.Counter
    private let seenRefusals = Mutex<(unsent: Int, address: Int, incomplete: Int)>((0, 0, 0))
    private let storageRefusals: CoreMetrics.Counter
    private let storageFull: CoreMetrics.Gauge
    private let memoryTrims: CoreMetrics.Counter
    private let seenTrims = Mutex<Int>(0)
    private let triggerMetrics: TriggerMetrics
    private let namespaceCount: CoreMetrics.Gauge
    private let namespaceGauges = Mutex<[String: (bytes: CoreMetrics.Gauge, streams: CoreMetrics.Gauge)]>([:])

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
        openStreams = Gauge(label: "hearth_open_streams", dimensions: [], factory: factory)
        databaseBytes = Gauge(label: "hearth_database_bytes", dimensions: [], factory: factory)
        namespaceCount = Gauge(label: "hearth_namespaces", dimensions: [], factory: factory)
        batchSize = Recorder(label: "hearth_write_batch_size", dimensions: [], aggregate: true, factory: factory)
        commitDuration = Timer(label: "hearth_commit_duration_seconds", dimensions: [], factory: factory)
        eventsDelivered = Counter(label: "hearth_stream_events_total", dimensions: [], factory: factory)
        streamsEnded = Counter(label: "hearth_streams_ended_total", dimensions: [], factory: factory)
        signInSuccess = Counter(label: "hearth_sign_ins_total", dimensions: [("result", "success")], factory: factory)
        signInFailure = Counter(label: "hearth_sign_ins_total", dimensions: [("result", "failure")], factory: factory)
        cacheHits = Counter(label: "hearth_read_cache_lookups_total", dimensions: [("result", "hit")], factory: factory)
        cacheMisses = Counter(label: "hearth_read_cache_lookups_total", dimensions: [("result", "miss")], factory: factory)
        cacheEntries = Gauge(label: "hearth_read_cache_entries", dimensions: [], factory: factory)
        cacheBytes = Gauge(label: "hearth_read_cache_bytes", dimensions: [], factory: factory)
        unsentBytes = Gauge(label: "hearth_http_unsent_bytes", dimensions: [], factory: factory)
        unsentRefusals = Counter(label: "hearth_http_unsent_refusals_total", dimensions: [], factory: factory)
        addressRefusals = Counter(label: "hearth_http_address_refusals_total", dimensions: [], factory: factory)
        incompleteBytes = Gauge(label: "hearth_http_incomplete_bytes", dimensions: [], factory: factory)
        incompleteRefusals = Counter(label: "hearth_http_incomplete_refusals_total", dimensions: [], factory: factory)
        storageRefusals = Counter(label: "hearth_storage_full_refusals_total", dimensions: [], factory: factory)
        storageFull = Gauge(label: "hearth_storage_full", dimensions: [], factory: factory)
        storageFull.record(0)
        memoryTrims = Counter(label: "hearth_memory_trims_total", dimensions: [], factory: factory)
        triggerMetrics = TriggerMetrics(factory: factory)
    }

    /// One write (tree or accounts) refused for lack of space.
    func recordStorageRefusal() {
        storageRefusals.increment()
    }

    /// One answered request (or closed stream).
    func record(_ entry: HTTPAccessRecord) {
        let route = Self.route(of: entry)
        let key = route + " " + String(entry.status)
        let counter = requestCounters.withLock { counters in
            if let existing = counters[key] { return existing }
            let made = Counter(label: "hearth_http_requests_total", dimensions: [("route", route), ("status", String(entry.status))], factory: factory)
            counters[key] = made
            return made
        }
        counter.increment()
        if !entry.isStream {
            let timer = requestTimers.withLock { timers in
                if let existing = timers[route] { return existing }
                let made = Timer(label: "hearth_http_request_duration_seconds", dimensions: [("route", route)], factory: factory)
                timers[route] = made
                return made
            }
            timer.recordNanoseconds(Int64(clamping: entry.durationNanoseconds))
        }
        if route == "auth.signIn" {
            (entry.status == 200 ? signInSuccess : signInFailure).increment()
        }
    }

    /// One committed write batch.
    func recordCommit(writes: Int, nanoseconds: UInt64) {
        batchSize.record(writes)
        commitDuration.recordNanoseconds(Int64(clamping: nanoseconds))
    }

    /// The Prometheus text, with the scrape-time gauges and counters brought up to date.
    func render(http: HTTPServerStats, streams: Int, eventsDelivered events: Int, streamsEnded ended: Int,
                readCache: ReadCache.Stats = ReadCache.Stats(), storageFull full: Bool = false,
                memoryTrims trims: Int = 0, databaseBytes database: Int64 = 0, triggers: TriggerDelivery? = nil) -> [UInt8] {
        databaseBytes.record(database)
        if let triggers { triggerMetrics.update(triggers) }
        storageFull.record(full ? 1 : 0)
        let newTrims = seenTrims.withLock { seen in
            defer { seen = trims }
            return trims - seen
        }
        if newTrims > 0 { memoryTrims.increment(by: newTrims) }
        let (newHits, newMisses) = seenCache.withLock { seen in
            defer { seen = (readCache.hits, readCache.misses) }
            return (readCache.hits - seen.hits, readCache.misses - seen.misses)
        }
        if newHits > 0 { cacheHits.increment(by: newHits) }
        if newMisses > 0 { cacheMisses.increment(by: newMisses) }
        cacheEntries.record(readCache.entries)
        cacheBytes.record(readCache.bytes)
        openConnections.record(http.openConnections)
        openStreams.record(streams)
        unsentBytes.record(http.unsentBytes)
        incompleteBytes.record(http.incompleteBytes)
        let (newUnsent, newAddress, newIncomplete) = seenRefusals.withLock { seen in
            defer { seen = (http.unsentRefusals, http.addressRefusals, http.incompleteRefusals) }
            return (http.unsentRefusals - seen.unsent, http.addressRefusals - seen.address, http.incompleteRefusals - seen.incomplete)
        }
        if newUnsent > 0 { unsentRefusals.increment(by: newUnsent) }
        if newAddress > 0 { addressRefusals.increment(by: newAddress) }
        if newIncomplete > 0 { incompleteRefusals.increment(by: newIncomplete) }
        let (newEvents, newEnded) = seen.withLock { seen in
            defer { seen = (events, ended) }
            return (events - seen.events, ended - seen.ended)
        }
        if newEvents > 0 { eventsDelivered.increment(by: newEvents) }
        if newEnded > 0 { streamsEnded.increment(by: newEnded) }
        return registry.emitToBuffer()
    }

    /// Each namespace's store size and open streams (issue 28): `(default)` for the default.
    /// Label values are the namespaces' names, at most `NamespaceRegistry.maxNamespaces` + 1.
    func recordNamespaces(_ namespaces: [(name: String, bytes: Int64, streams: Int)]) {
        namespaceCount.record(namespaces.count - 1)
        let factory = self.factory
        namespaceGauges.withLock { gauges in
            for namespace in namespaces {
                let label = namespace.name.isEmpty ? "(default)" : namespace.name
                let pair = gauges[label] ?? (
                    Gauge(label: "hearth_namespace_database_bytes", dimensions: [("namespace", label)], factory: factory),
                    Gauge(label: "hearth_namespace_open_streams", dimensions: [("namespace", label)], factory: factory))
                gauges[label] = pair
                pair.bytes.record(namespace.bytes)
                pair.streams.record(namespace.streams)
            }
        }
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
