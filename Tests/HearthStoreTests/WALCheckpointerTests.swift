import Foundation
import HearthJSON
import Testing
@testable import HearthSQLite
@testable import HearthStore

/// The WAL is checkpointed by `WALCheckpointer` on its own connection, not inside the
/// writer's COMMITs, and still keeps the WAL from growing.
@Suite struct WALCheckpointerTests {
    let dir = TemporaryDirectory()

    func open() throws -> SQLiteTreeStore {
        var options = StoreOptions()
        options.synchronous = .normal  // many small commits; durability is not what is tested
        return try SQLiteTreeStore(directory: dir.path, options: options)
    }

    func walBytes(_ store: SQLiteTreeStore) -> Int {
        (try? FileManager.default.attributesOfItem(atPath: store.databasePath + "-wal")[.size] as? Int) ?? 0
    }

    /// Commits until the WAL has held at least `frames` frames in all (each commit writes
    /// two or more: the leaf's page and the change log's).
    func write(frames: Int, to store: SQLiteTreeStore) throws {
        var index = 0
        var written = 0
        while written < frames {
            // Each commit dirties at least the leaf page it lands on and the change log's.
            try store.put("log/k\(index)", .string(String(repeating: "x", count: 2_000)))
            index += 1
            written += 2
        }
    }

    @Test func theCheckpointerCheckpointsOnceTheWALCrossesItsThreshold() throws {
        let store = try open()
        #expect(store.checkpointer.runs.load(ordering: .relaxed) == 0)
        try write(frames: Int(WALCheckpointer.framesPerCheckpoint) + 100, to: store)
        // The request is queued inside the COMMIT that crossed the threshold, before that
        // write was acknowledged.
        store.checkpointer.waitIdle()
        #expect(store.checkpointer.runs.load(ordering: .relaxed) >= 1)
    }

    @Test func theWALIsStartedOverAfterACheckpointSoItStaysBounded() throws {
        let store = try open()
        try write(frames: 3 * Int(WALCheckpointer.framesBeforeTheWriterCheckpoints), to: store)
        store.checkpointer.waitIdle()
        // Without checkpoints the WAL would hold every frame written (6 x the threshold, at
        // page size 4096 plus a 24-byte header each); with them it is reused from its start
        // once it reaches the writer's own threshold.
        let frameBytes = 4_096 + 24
        #expect(walBytes(store) > 0)
        #expect(walBytes(store) < (Int(WALCheckpointer.framesBeforeTheWriterCheckpoints) + 100) * frameBytes)
        #expect(try store.get("log/k0") == .string(String(repeating: "x", count: 2_000)))
    }

    @Test func closeLeavesAnEmptyWALAndLaterRequestsDoNothing() throws {
        let store = try open()
        try write(frames: 200, to: store)
        store.close()
        #expect(walBytes(store) == 0)
        store.checkpointer.request()
        store.checkpointer.waitIdle()
        #expect(store.checkpointer.runs.load(ordering: .relaxed) == 0)
    }
}
