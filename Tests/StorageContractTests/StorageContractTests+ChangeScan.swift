import HearthJSON
import HearthStore
import Testing

/// The contract's change-log scan for one location (a resuming stream's replay): an
/// engine's own `changes(after:limit:touching:)` returns exactly the records that the whole
/// log's `changes(after:limit:)` holds at, above or below the location, and counts every
/// record it read, touching or not.
extension StorageContractTests {
    /// Keys that share bytes without being one path inside the other ("a" and "ab", "ü" and
    /// "üb"), the root, an ancestor's multi-path update, deeper paths and unicode.
    static let scanWrites: [WriteOperation] = [
        .set(WriteEntry(path: path("/users/a/favorites/f1"), value: ["name": "Oslo"])),
        .set(WriteEntry(path: path("/users/ab/favorites/f1"), value: ["name": "Bergen"])),
        .set(WriteEntry(path: path("/users/a"), value: ["favorites": ["f2": ["name": "Tromsø"]]])),
        .update(base: path("/users"), entries: [WriteEntry(path: path("/users/a/favorites/f3"), value: 3),
                                                WriteEntry(path: path("/users/b/x"), value: 4)]),
        .set(WriteEntry(path: path("/"), value: ["users": ["a": ["favorites": ["f4": 1]]]])),
        .set(WriteEntry(path: path("/users/ü/favorites/f1"), value: 5)),
        .set(WriteEntry(path: path("/users/üb"), value: 6)),
        .set(WriteEntry(path: path("/users/a/favorites/f1/note"), value: "deep")),
        .set(WriteEntry(path: path("/other"), value: 7)),
        .set(WriteEntry(path: path("/users/a/favorites"), value: nil)),
    ]

    @Test(arguments: ContractEngine.all)
    func aScanForOneLocationKeepsTheRecordsThatTouchItAndCountsTheRest(engine: ContractEngine) throws {
        let (place, _, store) = try Self.fresh(engine)
        defer { store.close(); _ = place }
        var seqs: [Int64] = []
        for write in Self.scanWrites { seqs.append(try store.writeSync(write, check: nil).seq) }
        let locations = ["/", "/users", "/users/a", "/users/a/favorites", "/users/a/favorites/f1", "/users/ab",
                         "/users/ü", "/users/üb", "/users/b", "/other", "/nowhere"].map(Self.path)
        let all = try store.changes(after: 0, limit: 1000).changes
        #expect(all.map(\.seq) == seqs)
        for location in locations {
            for (after, limit) in [(Int64(0), 1000), (seqs[2], 1000), (Int64(0), 4), (seqs[8], 1)] {
                let scan = try store.readSync { try $0.changes(after: after, limit: limit, touching: location) }
                let read = Array(all.filter { $0.seq > after }.prefix(limit))
                let touching = read.filter { location.isPrefix(of: $0.path) || $0.path.isAncestor(of: location) }
                #expect(scan.changes == touching, "\(location) after \(after), limit \(limit)")
                #expect(scan.scanned == read.count)
                #expect(scan.lastSeq == read.last?.seq)
                #expect(scan.oldestSeq == seqs.first)
            }
        }
        // The paths this log touches, by location: a check that the filter above is the one meant.
        let touchingA = try store.readSync { try $0.changes(after: 0, limit: 1000, touching: Self.path("/users/a")) }
        #expect(touchingA.changes.map(\.seq) == [seqs[0], seqs[2], seqs[3], seqs[4], seqs[7], seqs[9]])
        let touchingU = try store.readSync { try $0.changes(after: 0, limit: 1000, touching: Self.path("/users/ü")) }
        #expect(touchingU.changes.map(\.seq) == [seqs[3], seqs[4], seqs[5]])
    }
}
