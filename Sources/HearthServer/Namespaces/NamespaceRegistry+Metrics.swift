/// What `GET /metrics` reads from every open database.
extension NamespaceRegistry {
    /// Each open namespace's name (empty: the default, first) and what its metrics report.
    var metricsSnapshots: [(name: String, snapshot: DatabaseMetrics.Snapshot)] {
        all.map { namespace in
            let instance = namespace.instance
            let hub = instance.listens.hub
            let snapshot = DatabaseMetrics.Snapshot(
                streams: hub.openStreams, eventsDelivered: hub.eventsDelivered, streamsEnded: hub.streamsEnded,
                readCache: instance.readCache.stats, storageFull: instance.isStorageFull, bytes: instance.storageBytes,
                triggers: namespace.triggers)
            return (namespace.name, snapshot)
        }
    }
}
