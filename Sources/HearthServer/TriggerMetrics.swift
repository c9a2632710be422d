import CoreMetrics
import HearthTriggers
import Prometheus
import Synchronization

/// One database's triggers' metrics, per running trigger (labels `namespace` and
/// `trigger`), brought up to date at scrape time from `TriggerDelivery.status()` and its rate guard:
/// - `hearth_trigger_pending`, `hearth_trigger_oldest_pending_age_seconds`,
///   `hearth_trigger_stored_bytes` (the outbox: payload bytes of pending events and dead
///   letters, what the trigger's byte budget bounds);
/// - `hearth_trigger_delivered_total`, `hearth_trigger_failed_attempts_total`,
///   `hearth_trigger_dead_total` (every event moved to the dead letters),
///   `hearth_trigger_backlog_dropped_total` (of those, past `TriggerLimits.maxPendingPerTrigger`),
///   `hearth_trigger_rate_limited_total` (events recorded past the loop guard's rate,
///   `TriggerRateGuard`; they go to the dead letters too),
///   `hearth_trigger_budget_dropped_total` (pending events dropped undelivered past the byte
///   budget), `hearth_trigger_dead_removed_total` (dead letters deleted past the byte
///   budget or the retention) — counted since this process started.
final class TriggerMetrics: Sendable {
    private struct Seen {
        var delivered = 0, failed = 0, dead = 0, dropped = 0, limited = 0, budgetDropped = 0, deadRemoved = 0
    }
    private struct Series {
        let pending, oldestAge, storedBytes: CoreMetrics.Gauge
        let delivered, failed, dead, dropped, limited, budgetDropped, deadRemoved: CoreMetrics.Counter
        var seen = Seen()
    }
    private let factory: PrometheusMetricsFactory
    /// The database's label (`DatabaseMetrics.label`).
    private let namespace: String
    private let series = Mutex<[String: Series]>([:])

    init(namespace: String, factory: PrometheusMetricsFactory) { (self.namespace, self.factory) = (namespace, factory) }

    private func make(_ name: String) -> Series {
        let dimensions = [("namespace", namespace), ("trigger", name)]
        func counter(_ label: String) -> CoreMetrics.Counter { Counter(label: label, dimensions: dimensions, factory: factory) }
        return Series(pending: Gauge(label: "hearth_trigger_pending", dimensions: dimensions, factory: factory),
                      oldestAge: Gauge(label: "hearth_trigger_oldest_pending_age_seconds", dimensions: dimensions, factory: factory),
                      storedBytes: Gauge(label: "hearth_trigger_stored_bytes", dimensions: dimensions, factory: factory),
                      delivered: counter("hearth_trigger_delivered_total"), failed: counter("hearth_trigger_failed_attempts_total"),
                      dead: counter("hearth_trigger_dead_total"), dropped: counter("hearth_trigger_backlog_dropped_total"),
                      limited: counter("hearth_trigger_rate_limited_total"),
                      budgetDropped: counter("hearth_trigger_budget_dropped_total"), deadRemoved: counter("hearth_trigger_dead_removed_total"))
    }

    /// Brings every running trigger's series up to date.
    func update(_ delivery: TriggerDelivery) {
        let now = delivery.now()
        let limited = delivery.rateGuard.limited
        for (status, pending, oldestAt, storedBytes) in delivery.status() {
            series.withLock { all in
                var series = all[status.name] ?? make(status.name)
                defer { all[status.name] = series }
                series.pending.record(pending)
                series.storedBytes.record(storedBytes)
                series.oldestAge.record(oldestAt.map { Double(max(0, now - $0)) / 1000 } ?? 0)
                // A deliverer started again (a reload that removed and re-added its trigger)
                // counts from zero: its whole count is new.
                func advance(_ counter: CoreMetrics.Counter, _ seen: inout Int, _ value: Int) {
                    let new = value >= seen ? value - seen : value
                    if new > 0 { counter.increment(by: new) }
                    seen = value
                }
                advance(series.delivered, &series.seen.delivered, status.delivered)
                advance(series.failed, &series.seen.failed, status.failedAttempts)
                advance(series.dead, &series.seen.dead, status.deadLettered)
                advance(series.dropped, &series.seen.dropped, status.backlogOverflow)
                advance(series.limited, &series.seen.limited, limited[status.name] ?? 0)
                advance(series.budgetDropped, &series.seen.budgetDropped, status.budgetDropped)
                advance(series.deadRemoved, &series.seen.deadRemoved, status.deadRemoved)
            }
        }
    }
}
