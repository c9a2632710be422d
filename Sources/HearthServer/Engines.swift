import Foundation
import HearthPostgres
import HearthSQLite
import HearthStore
import HearthSystem
import Logging

/// The engines this server is built with, and opening one (each engine
/// registers how it opens through its `EngineFactory`). `all` is the composition root's
/// list; this file is the one in HearthServer that names the engine modules.
public enum Engines {
    /// Every engine of this build; the first is the default (`--store` empty).
    public static let all: [any EngineFactory] = [SQLiteEngineFactory(), PostgresEngineFactory()]
    /// The form of a backup (`hearth backup` of any engine writes one) and of the private
    /// store an import into an engine without a local directory is checked in first.
    public static let backupFormat: any LocalStoreFormat = SQLiteEngineFactory()

    /// How often a node of a shared engine looks for onDisconnect operations left by
    /// nodes whose lease expired, seconds.
    public static let orphanCheckInterval: Double = 2
    /// How often a node of a shared engine re-reads the signing keys, seconds (a rotation
    /// on another node signs here within this time; tokens signed there verify at once).
    public static let keyReloadInterval: Double = 10

    /// How long `hearth serve` keeps trying to reach a shared store's database at start,
    /// seconds (`storeStartupWaitSeconds`): nodes and their database booted in any order
    /// come up together.
    static let defaultStartupWaitSeconds = 120

    /// Opens the engine. A shared store's database that cannot be reached (down, starting,
    /// out of connections) is tried again with `StartupBackoff` for up to `waitSeconds`,
    /// each failure logged; then its last failure is thrown.
    public static func open(_ location: StoreLocation, options: StoreOptions, hooks: EngineHooks,
                            clock: @escaping @Sendable () -> Int64 = WallClock.milliseconds,
                            logger: Logger? = nil, waitSeconds: Int = 0,
                            engines: [any EngineFactory] = all) throws(StoreError) -> any StorageEngine {
        let factory = try engines.factory(for: location)
        guard factory.isShared else { return try factory.open(location, options: options, hooks: hooks, clock: clock) }
        let backoff = StartupBackoff(limitSeconds: Double(waitSeconds))
        let started = ContinuousClock.now
        var failures = 0
        while true {
            do {
                let engine = try factory.open(location, options: options, hooks: hooks, clock: clock)
                if failures > 0 { logger?.info("reached the database after \(failures) failed attempt(s)") }
                return engine
            } catch {
                failures += 1
                let elapsed = started.duration(to: .now)
                let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
                guard StartupBackoff.isTransient(error), let delay = backoff.delay(afterFailures: failures, elapsed: seconds) else { throw error }
                let advice = failures == 1 ? factory.unreachableAdvice(options).map { " " + $0 } ?? "" : ""
                logger?.warning("cannot reach the database (\(error)); trying again in \(Int((delay * 1000).rounded())) ms, until \(waitSeconds) s after the first try (storeStartupWaitSeconds).\(advice)")
                Syscall.sleep(seconds: delay)
            }
        }
    }

    /// The engine for an operator command (no streams): the same setting as `serve`.
    public static func open(_ location: StoreLocation, engines: [any EngineFactory] = all) throws(StoreError) -> any StorageEngine {
        try open(location, options: StoreOptions(), hooks: EngineHooks(), engines: engines)
    }
}

extension StoreLocation {
    /// Parses a `--store` value with the engines of this build (`Engines.all`).
    public init(parsing text: String, defaultDirectory: String) throws(ParseError) {
        try self.init(parsing: text, defaultDirectory: defaultDirectory, engines: Engines.all)
    }
}

/// The pauses between a node's attempts to reach its database at start: from
/// `firstDelaySeconds`, doubling up to `maxDelaySeconds`, until `limitSeconds` after the
/// first attempt (the last attempt is at the limit). A pure rule (`StartupBackoffTests`).
struct StartupBackoff: Sendable {
    static let firstDelaySeconds = 0.5
    static let maxDelaySeconds = 10.0
    let limitSeconds: Double

    /// The pause before the next attempt after `failures` failed ones, the first begun
    /// `elapsed` seconds ago; nil: give up.
    func delay(afterFailures failures: Int, elapsed: Double) -> Double? {
        guard failures >= 1, elapsed < limitSeconds else { return nil }
        let doubled = Self.firstDelaySeconds * Double(1 << min(failures - 1, 16))
        return min(doubled, Self.maxDelaySeconds, limitSeconds - elapsed)
    }

    /// Whether a failure to open the store may pass: the database cannot be reached or is
    /// out of room (connections, memory), not a refused schema or corrupt data.
    static func isTransient(_ error: StoreError) -> Bool {
        guard case .engine(let failure) = error else { return false }
        return failure.kind == .unavailable || failure.kind == .full
    }
}
