/// What `GET /metrics` reads from every open database.
extension NamespaceRegistry {
    /// Each open namespace's name (empty: the default, first) and what its metrics report.
    var metricsSnapshots: [(name: String, snapshot: DatabaseMetrics.Snapshot)] {
        ([primary] + extras.sorted { $0.name < $1.name }).map { namespace in
            let context = namespace.context
            let snapshot = DatabaseMetrics.Snapshot(
                streams: context.streams.openStreams, eventsDelivered: context.streams.eventsDelivered,
                streamsEnded: context.streams.streamsEnded, readCache: context.readCache?.stats ?? ReadCache.Stats(),
                storageFull: namespace.store.isStorageFull, bytes: namespace.store.storageBytes() ?? 0,
                triggers: context.triggers)
            return (namespace.name, snapshot)
        }
    }
}
