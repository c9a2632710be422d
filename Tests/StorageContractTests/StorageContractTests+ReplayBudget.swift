import HearthJSON
import HearthStore
import Testing

/// The contract's byte budget on a scan for one location (`maxBytes`): the touching
/// records' stored data is counted before it is decoded, the scan stops at the first record
/// that would pass the budget and says so (`tooLarge`), and the other locations' records
/// count for nothing however large.
extension StorageContractTests {
    @Test(arguments: ContractEngine.all)
    func aScanStopsAtTheRecordThatWouldPassItsByteBudget(engine: ContractEngine) throws {
        let (place, _, store) = try Self.fresh(engine)
        defer { store.close(); _ = place }
        let large = String(repeating: "z", count: 50_000)
        let writes: [WriteOperation] = [
            .set(WriteEntry(path: Self.path("/a/x"), value: .string(String(repeating: "x", count: 100)))),
            .set(WriteEntry(path: Self.path("/b"), value: .string(large))),
            .set(WriteEntry(path: Self.path("/a"), value: ["y": 1, "z": .string(String(repeating: "y", count: 300))])),
            .set(WriteEntry(path: Self.path("/ab"), value: .string(large))),
            .set(WriteEntry(path: Self.path("/"), value: ["a": ["w": 2]])),
            .set(WriteEntry(path: Self.path("/a/x/deep"), value: 7)),
        ]
        for write in writes { _ = try store.writeSync(write, check: nil) }
        let location = Self.path("/a")
        let whole = try store.readSync { try $0.changes(after: 0, limit: 1000, touching: location) }
        #expect(!whole.tooLarge && whole.changes.count == 4)
        let sizes = whole.changes.map { JSONWriter.write($0.data).count }
        #expect(sizes[0] == 102, "a leaf of 100 characters is stored as its JSON string")
        let all = try store.changes(after: 0, limit: 1000).changes
        for kept in 0...sizes.count {
            let fits = sizes.prefix(kept).reduce(0, +)
            for budget in [fits, fits + (kept < sizes.count ? sizes[kept] - 1 : 1_000_000)] {
                let scan = try store.readSync { try $0.changes(after: 0, limit: 1000, touching: location, maxBytes: budget) }
                #expect(scan.changes == Array(whole.changes.prefix(kept)), "budget \(budget)")
                #expect(scan.tooLarge == (kept < sizes.count), "budget \(budget)")
                // What the scan counted ends before the record it stopped at.
                let stop = kept < sizes.count ? whole.changes[kept].seq : Int64.max
                let read = all.filter { $0.seq < stop }
                #expect(scan.scanned == read.count && scan.lastSeq == read.last?.seq, "budget \(budget)")
            }
        }
        // The 50,000-byte records elsewhere never count against /a's budget.
        let small = try store.readSync { try $0.changes(after: 0, limit: 1000, touching: location, maxBytes: sizes.reduce(0, +)) }
        #expect(!small.tooLarge && small.changes == whole.changes)
    }
}
