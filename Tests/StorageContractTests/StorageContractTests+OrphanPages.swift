import HearthStore
import Synchronization
import Testing

/// The contract's paging of onDisconnect orphans: a page holds whole sessions, in session
/// order, up to the one whose records reach the page's bytes, and the next page starts
/// after the last session of the one before.
extension StorageContractTests {
    /// Five sessions left by a stopped node, one of them with three records, each record
    /// 4 bytes (`{}` twice), read 8 bytes a page after a first page of 0. A session is
    /// taken while those before it in the page hold fewer bytes: four pages and then none,
    /// every record once, each session's records together and in registration order.
    @Test(arguments: ContractEngine.all)
    func orphansComeAPageOfWholeSessionsAtATime(engine: ContractEngine) throws {
        let place = try engine.makePlace()
        let now = Atomic<Int64>(1_000_000)
        let clock: @Sendable () -> Int64 = { now.load(ordering: .relaxed) }
        let dying = try engine.open(place.address, EngineHooks(), clock: clock)
        // Added out of session order, to show the pages are by session id.
        let added: [(String, Int64)] = [("e", 0), ("b", 0), ("a", 0), ("b", 2), ("d", 0), ("c", 0), ("b", 1)]
        for (session, position) in added {
            try dying.onDisconnectRecords.add(OnDisconnectRecord(session: session, position: position, operation: "{}", caller: "{}"))
        }
        engine.die(dying) { now.add($0, ordering: .relaxed) }
        let next = try engine.open(place.address, EngineHooks(), clock: clock)
        defer { next.close(); dying.close(); _ = place }

        func page(after: String?, bytes: Int = 8) throws -> [String] {
            try next.onDisconnectRecords.orphans(after: after, bytes: bytes).map { "\($0.session)\($0.position)" }
        }
        // A page always holds its first session, however few its bytes.
        #expect(try page(after: nil, bytes: 0) == ["a0"])
        #expect(try page(after: "a") == ["b0", "b1", "b2"])
        #expect(try page(after: "b") == ["c0", "d0"])
        #expect(try page(after: "d") == ["e0"])
        #expect(try page(after: "e") == [])
    }
}
