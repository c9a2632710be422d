import HearthPostgres
import HearthSQLite
import HearthStore
import HearthTesting

/// One storage engine as the contract suite opens it (docs/architecture.md, "The storage
/// contract"). A new engine is a module and one entry in `all`.
struct ContractEngine: Sendable, CustomStringConvertible {
    let name: String
    /// A fresh, empty place for the engine's data: its address and what keeps it alive.
    let makePlace: @Sendable () throws -> Place
    /// Opens (or reopens) the engine at a place's address.
    let open: @Sendable (_ address: String, _ hooks: EngineHooks) throws -> any StorageEngine

    var description: String { name }

    /// Every engine the contract is checked on: SQLite always; PostgreSQL where it is
    /// installed, and on CI (`CI=true`) always, failing when it is missing.
    static let all: [ContractEngine] = [.sqlite] + (PostgresTests.enabled ? [.postgres] : [])

    static let sqlite = ContractEngine(
        name: "sqlite",
        makePlace: {
            let directory = TemporaryDirectory(prefix: "hearth-contract")
            return Place(address: directory.path, keeping: directory)
        },
        open: { address, hooks in try SQLiteTreeStore(directory: address, hooks: hooks) })

    static let postgres = ContractEngine(
        name: "postgres",
        makePlace: { Place(address: try PostgresCluster.shared().makeDatabase(), keeping: nil) },
        open: { address, hooks in try PostgresEngine(url: address, hooks: hooks) })
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
