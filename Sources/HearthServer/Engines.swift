import HearthPostgres
import HearthStore
import Logging

/// Opens the storage engine a `StoreLocation` names (issue 17): the one place above the
/// store that knows which engines exist.
public enum Engines {
    /// How often a node of a shared engine looks for onDisconnect operations left by
    /// nodes whose lease expired, seconds.
    public static let orphanCheckInterval: Double = 2
    /// How often a node of a shared engine re-reads the signing keys, seconds (a rotation
    /// on another node signs here within this time; tokens signed there verify at once).
    public static let keyReloadInterval: Double = 10

    public static func open(_ location: StoreLocation, options: StoreOptions, hooks: EngineHooks,
                            clock: @escaping @Sendable () -> Int64 = WallClock.milliseconds,
                            logger: Logger? = nil) throws(StoreError) -> any StorageEngine {
        switch location {
        case .sqlite(let directory):
            return try SQLiteTreeStore(directory: directory, options: options, clock: clock, hooks: hooks)
        case .postgres(let url):
            return try PostgresEngine(url: url, options: options, clock: clock, hooks: hooks)
        }
    }

    /// The engine for an operator command (no streams): the same setting as `serve`.
    public static func open(_ location: StoreLocation) throws(StoreError) -> any StorageEngine {
        try open(location, options: StoreOptions(), hooks: EngineHooks())
    }
}

extension StoreLocation {
    /// Whether several nodes may share this store.
    public var isShared: Bool {
        if case .postgres = self { return true }
        return false
    }
}
