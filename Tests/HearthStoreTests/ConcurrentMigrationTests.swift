import Foundation
import Synchronization
import Testing
@testable import HearthSQLite
@testable import HearthStore

/// Several openers migrating one fresh database at the same moment (a server starting and
/// `hearth token` beside it): each migration step runs exactly once, every opener succeeds.
@Suite struct ConcurrentMigrationTests {
    /// Fresh databases raced per test: each round is one chance for the openers to read the
    /// version before any of them took the write lock.
    static let rounds = 20
    /// Openers per round.
    static let openers = 4

    /// Runs `body(i)` on `openers` threads released together; the results in order.
    static func race<T: Sendable>(_ body: @escaping @Sendable (Int) -> T) -> [T] {
        let ready = DispatchSemaphore(value: 0), go = DispatchSemaphore(value: 0), done = DispatchGroup()
        let results = Mutex<[Int: T]>([:])
        for index in 0..<openers {
            done.enter()
            Thread {
                ready.signal()
                go.wait()
                let result = body(index)
                results.withLock { $0[index] = result }
                done.leave()
            }.start()
        }
        for _ in 0..<openers { ready.wait() }
        for _ in 0..<openers { go.signal() }
        done.wait()
        return results.withLock { state in (0..<openers).map { state[$0]! } }
    }

    @Test func connectionsMigratingAFreshDatabaseAtOnceRunEachStepOnce() throws {
        for round in 0..<Self.rounds {
            let dir = TemporaryDirectory()
            let path = dir.path + "/" + SQLiteTreeStore.fileName
            let outcomes = Self.race { _ -> Result<Int, StoreError> in
                Result { () throws(StoreError) -> Int in
                    let connection = try SQLiteConnection(path: path, mode: .readWriteCreate)
                    defer { connection.close() }
                    try connection.execute("PRAGMA busy_timeout = \(StoreOptions.defaultBusyTimeoutMilliseconds)")
                    try Schema.useWAL(connection, busyTimeoutMilliseconds: StoreOptions.defaultBusyTimeoutMilliseconds)
                    return try Schema.migrate(connection)
                }
            }
            let steps = try outcomes.map { try $0.get() }
            #expect(steps.reduce(0, +) == Schema.currentVersion, "round \(round): \(steps)")
            #expect(try IndexedBackupTests.rows(path, "PRAGMA user_version") == Int64(Schema.currentVersion))
        }
    }

    @Test func storesOpeningAFreshDirectoryAtOnceAllOpen() throws {
        for round in 0..<Self.rounds {
            let dir = TemporaryDirectory()
            let outcomes = Self.race { _ -> Result<SQLiteTreeStore, StoreError> in
                Result { () throws(StoreError) -> SQLiteTreeStore in try SQLiteTreeStore(directory: dir.path) }
            }
            let stores = outcomes.compactMap { try? $0.get() }
            #expect(stores.count == Self.openers, "round \(round): \(outcomes.compactMap { if case .failure(let e) = $0 { e } else { nil } })")
            // Each opener can use the accounts the migration made (the table the race lost).
            for (index, store) in stores.enumerated() {
                try store.accounts.insert(UserRecord(uid: "u\(index)", provider: .anonymous, createdAt: 0, validSince: 0))
            }
            for store in stores { store.close() }
        }
    }

    /// The WAL switch waits for another connection's lock at most the busy timeout: held
    /// past it, the opener fails with the busy error (no hang); released, it switches.
    @Test func theWALSwitchWaitsAtMostTheBusyTimeout() throws {
        let dir = TemporaryDirectory()
        let path = dir.path + "/" + SQLiteTreeStore.fileName
        let holder = try SQLiteConnection(path: path, mode: .readWriteCreate)
        defer { holder.close() }
        try holder.execute("CREATE TABLE t(x)")
        try holder.execute("BEGIN EXCLUSIVE")
        let opener = try SQLiteConnection(path: path, mode: .readWriteCreate)
        defer { opener.close() }
        for timeout in [0, Int(Schema.walSwitchPauseMilliseconds) * 4] {
            do {
                try Schema.useWAL(opener, busyTimeoutMilliseconds: timeout)
                Issue.record("switched while another connection held the database (timeout \(timeout) ms)")
            } catch {
                #expect(error.isBusy, "\(error)")
            }
        }
        try holder.execute("COMMIT")
        try Schema.useWAL(opener, busyTimeoutMilliseconds: 0)
        #expect(try opener.scalarText("PRAGMA journal_mode") == "wal")
    }
}
