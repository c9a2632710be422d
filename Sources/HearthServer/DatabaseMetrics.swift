import CoreMetrics
import HearthDatabase
import HearthTriggers
import Prometheus
import Synchronization

/// One database's metrics, every series labelled `namespace` (`(default)` for the
/// default one): what it committed, what its read cache answered, its streams, its size and
/// its triggers. The writer's numbers arrive as they happen (`recordCommit`,
/// `recordStorageRefusal`); the rest is brought up to date at scrape time from a
/// `DatabaseMetrics.Snapshot`.
///
/// - `hearth_write_batch_size{namespace}`, `hearth_commit_duration_seconds{namespace}`,
///   `hearth_wal_sync_seconds{namespace}` (SQLite with `synchronous=full`: each sync that
///   made committed batches durable, off the writer's thread);
/// - `hearth_write_queue_seconds{namespace}` (how long each write waited for its batch to
///   start) and `hearth_write_duration_seconds{namespace}` (from joining the writer's queue
///   to its answer: that wait, its batch's commit and the sync that made it durable), so a
///   slow write shows where it waited;
/// - `hearth_database_bytes{namespace}` (its database file and write-ahead log, or its
///   schema's tables), `hearth_storage_full{namespace}`, `hearth_storage_full_refusals_total{namespace}`;
/// - `hearth_open_streams{namespace}`, `hearth_stream_events_total{namespace}`,
///   `hearth_streams_ended_total{namespace}`;
/// - `hearth_read_cache_lookups_total{namespace,result}`, `hearth_read_cache_entries{namespace}`,
///   `hearth_read_cache_bytes{namespace}`;
/// - `hearth_trigger_*{namespace,trigger}` (`TriggerMetrics`).
final class DatabaseMetrics: Sendable {
    /// What the scrape reads from one open database.
    struct Snapshot: Sendable {
        var streams = 0
        var eventsDelivered = 0
        var streamsEnded = 0
        var readCache = ReadCache.Stats()
        var storageFull = false
        var bytes: Int64 = 0
        var triggers: TriggerDelivery? = nil
    }

    private struct Seen {
        var events = 0, ended = 0, hits = 0, misses = 0
    }

    let label: String
    private let batchSize: CoreMetrics.Recorder
    private let commitDuration: CoreMetrics.Timer
    private let walSyncDuration: CoreMetrics.Timer
    private let writeQueueWait: CoreMetrics.Timer
    private let writeDuration: CoreMetrics.Timer
    private let databaseBytes: CoreMetrics.Gauge
    private let storageFull: CoreMetrics.Gauge
    private let storageRefusals: CoreMetrics.Counter
    private let openStreams: CoreMetrics.Gauge
    private let eventsDelivered: CoreMetrics.Counter
    private let streamsEnded: CoreMetrics.Counter
    private let cacheHits: CoreMetrics.Counter
    private let cacheMisses: CoreMetrics.Counter
    private let cacheEntries: CoreMetrics.Gauge
    private let cacheBytes: CoreMetrics.Gauge
    private let triggers: TriggerMetrics
    private let seen = Mutex(Seen())

    init(label: String, factory: PrometheusMetricsFactory) {
        self.label = label
        let namespace = [("namespace", label)]
        func gauge(_ name: String) -> CoreMetrics.Gauge { Gauge(label: name, dimensions: namespace, factory: factory) }
        func counter(_ name: String, _ extra: [(String, String)] = []) -> CoreMetrics.Counter {
            Counter(label: name, dimensions: namespace + extra, factory: factory)
        }
        batchSize = Recorder(label: "hearth_write_batch_size", dimensions: namespace, aggregate: true, factory: factory)
        commitDuration = Timer(label: "hearth_commit_duration_seconds", dimensions: namespace, factory: factory)
        walSyncDuration = Timer(label: "hearth_wal_sync_seconds", dimensions: namespace, factory: factory)
        writeQueueWait = Timer(label: "hearth_write_queue_seconds", dimensions: namespace, factory: factory)
        writeDuration = Timer(label: "hearth_write_duration_seconds", dimensions: namespace, factory: factory)
        databaseBytes = gauge("hearth_database_bytes")
        storageFull = gauge("hearth_storage_full")
        storageFull.record(0)
        storageRefusals = counter("hearth_storage_full_refusals_total")
        openStreams = gauge("hearth_open_streams")
        eventsDelivered = counter("hearth_stream_events_total")
        streamsEnded = counter("hearth_streams_ended_total")
        cacheHits = counter("hearth_read_cache_lookups_total", [("result", "hit")])
        cacheMisses = counter("hearth_read_cache_lookups_total", [("result", "miss")])
        cacheEntries = gauge("hearth_read_cache_entries")
        cacheBytes = gauge("hearth_read_cache_bytes")
        triggers = TriggerMetrics(namespace: label, factory: factory)
    }

    /// One committed write batch.
    func recordCommit(writes: Int, nanoseconds: UInt64) {
        batchSize.record(writes)
        commitDuration.recordNanoseconds(Int64(clamping: nanoseconds))
    }

    /// One sync of the write-ahead log after commits.
    func recordWALSync(nanoseconds: UInt64) {
        walSyncDuration.recordNanoseconds(Int64(clamping: nanoseconds))
    }

    /// One write answered: how long it waited for its batch, and took in all.
    func recordWrite(waited: UInt64, answered: UInt64) {
        writeQueueWait.recordNanoseconds(Int64(clamping: waited))
        writeDuration.recordNanoseconds(Int64(clamping: answered))
    }

    /// One write (tree or accounts) refused for lack of space.
    func recordStorageRefusal() {
        storageRefusals.increment()
    }

    /// Brings the scrape-time series up to date. Counters advance by what the database's
    /// own counts grew since the last scrape.
    func update(_ snapshot: Snapshot) {
        databaseBytes.record(snapshot.bytes)
        storageFull.record(snapshot.storageFull ? 1 : 0)
        openStreams.record(snapshot.streams)
        cacheEntries.record(snapshot.readCache.entries)
        cacheBytes.record(snapshot.readCache.bytes)
        let grown = seen.withLock { seen in
            defer {
                seen = Seen(events: snapshot.eventsDelivered, ended: snapshot.streamsEnded,
                            hits: snapshot.readCache.hits, misses: snapshot.readCache.misses)
            }
            return Seen(events: snapshot.eventsDelivered - seen.events, ended: snapshot.streamsEnded - seen.ended,
                        hits: snapshot.readCache.hits - seen.hits, misses: snapshot.readCache.misses - seen.misses)
        }
        if grown.events > 0 { eventsDelivered.increment(by: grown.events) }
        if grown.ended > 0 { streamsEnded.increment(by: grown.ended) }
        if grown.hits > 0 { cacheHits.increment(by: grown.hits) }
        if grown.misses > 0 { cacheMisses.increment(by: grown.misses) }
        if let delivery = snapshot.triggers { triggers.update(delivery) }
    }
}
