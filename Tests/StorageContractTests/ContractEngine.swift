import HearthSQLite
import HearthStore
import HearthTesting
@testable import HearthPostgres

/// One storage engine as the contract suite opens it (docs/architecture.md, "The storage
/// contract"). A new engine is a module and one entry in `all`.
struct ContractEngine: Sendable, CustomStringConvertible {
    let name: String
    /// Whether several nodes share one place (`StorageEngine.isShared`): the feed-gap
    /// signal and leases are theirs; an engine with one node never signals either.
    let isShared: Bool
    /// A fresh, empty place for the engine's data: its address and what keeps it alive.
    let makePlace: @Sendable () throws -> Place
    /// Opens (or reopens; on a shared engine: another node) at a place's address.
    let opener: @Sendable (_ address: String, _ hooks: EngineHooks, _ options: StoreOptions,
                           _ clock: @escaping @Sendable () -> Int64) throws -> any StorageEngine
    /// Holds back (true) or resumes (false) the delivery of other nodes' changes to a node
    /// (a node falling behind); nothing on an engine with one node.
    let holdFeed: @Sendable (any StorageEngine, Bool) -> Void
    /// Makes a node stop as if killed (it no longer renews its lease, or it closes), and
    /// moves the clock (`advance`, ms) until what it left is another node's.
    let die: @Sendable (any StorageEngine, _ advance: (Int64) -> Void) -> Void
    /// Cuts a node off (its lease renewals stop reaching the database), moves the clock
    /// past the point where it must give its lease up, and lets it look; an engine with no
    /// lease only sees the clock move.
    let cutOff: @Sendable (any StorageEngine, _ advance: (Int64) -> Void) -> Void

    var description: String { name }

    func open(_ address: String, _ hooks: EngineHooks, options: StoreOptions = StoreOptions(),
              clock: @escaping @Sendable () -> Int64 = WallClock.milliseconds) throws -> any StorageEngine {
        try opener(address, hooks, options, clock)
    }

    /// Every engine the contract is checked on: SQLite always; PostgreSQL where it is
    /// installed, and on CI (`CI=true`) always, failing when it is missing.
    static let all: [ContractEngine] = [.sqlite] + (PostgresTests.enabled ? [.postgres] : [])

    static let sqlite = ContractEngine(
        name: "sqlite", isShared: false,
        makePlace: {
            let directory = TemporaryDirectory(prefix: "hearth-contract")
            return Place(address: directory.path, keeping: directory)
        },
        opener: { address, hooks, options, clock in try SQLiteTreeStore(directory: address, options: options, clock: clock, hooks: hooks) },
        holdFeed: { _, _ in },
        die: { engine, _ in engine.close() },
        cutOff: { _, advance in advance(3_600_000) })

    static let postgres = ContractEngine(
        name: "postgres", isShared: true,
        makePlace: { Place(address: try PostgresCluster.shared().makeDatabase(), keeping: nil) },
        // Leases on the test's clock: the node cases move it past a lease.
        opener: { address, hooks, options, clock in
            try PostgresEngine(url: address, options: options, clock: clock, hooks: hooks, leaseTimeFromDatabase: false)
        },
        holdFeed: { engine, hold in (engine as? PostgresEngine)?.pauseFeedForTesting(hold) },
        die: { engine, advance in
            (engine as? PostgresEngine)?.stopLeaseForTesting()
            advance(PostgresEngine.leaseMilliseconds + 1)
        },
        cutOff: { engine, advance in
            (engine as? PostgresEngine)?.stopLeaseForTesting()
            advance(PostgresEngine.leaseMilliseconds - PostgresEngine.leaseSafetyMarginMilliseconds)
            _ = (engine as? PostgresEngine)?.checkLeaseForTesting()
        })
}

/// Where one test's data lives, kept alive (a temporary directory is removed on deinit)
/// for as long as the test holds it.
final class Place: Sendable {
    let address: String
    private let kept: (any Sendable)?

    init(address: String, keeping kept: (any Sendable)?) {
        (self.address, self.kept) = (address, kept)
    }
}
