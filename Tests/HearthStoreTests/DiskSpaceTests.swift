import Foundation
import HearthJSON
import HearthTesting
import Testing
@testable import HearthSQLite
@testable import HearthStore

/// The parts of the full-disk handling that need no full disk (the disk itself:
/// DiskFullEndToEndTests on a tmpfs).
@Suite struct DiskSpaceTests {
    static func path(_ text: String) -> DataPath { try! DataPath(string: text) }

    @Test func onlyDeletesIsTrueForWritesThatAddNothing() {
        let a = Self.path("/a"), b = Self.path("/a/b")
        #expect(WriteOperation.set(WriteEntry(path: a, value: nil)).onlyDeletes)
        #expect(WriteOperation.update(base: a, entries: [WriteEntry(path: a, value: nil), WriteEntry(path: b, value: nil)]).onlyDeletes)
        #expect(!WriteOperation.set(WriteEntry(path: a, value: .int(1))).onlyDeletes)
        #expect(!WriteOperation.update(base: a, entries: [WriteEntry(path: a, value: nil), WriteEntry(path: b, value: .bool(true))]).onlyDeletes)
        #expect(!WriteOperation.update(base: a, entries: []).onlyDeletes)
    }

    /// A write's entries, as the store and the rules walk them: a set's one entry, an
    /// update's in order, none for an empty update.
    @Test func aWritesEntriesAreItsReplacementsInOrder() {
        let a = WriteEntry(path: Self.path("/a"), value: .int(1)), b = WriteEntry(path: Self.path("/a/b"), value: nil)
        let set = WriteOperation.set(a).entries
        #expect(set.count == 1 && set.first == a && Array(set) == [a])
        let update = WriteOperation.update(base: Self.path("/a"), entries: [b, a, b]).entries
        #expect(update.count == 3 && Array(update) == [b, a, b] && update[1] == a)
        #expect(WriteOperation.update(base: .root, entries: []).entries.isEmpty)
    }

    @Test func diskFullIsSQLiteFullOrAReadinessFinding() {
        #expect(StoreError.sqlite(code: 13, message: "database or disk is full", operation: "exec").isDiskFull)
        #expect(StoreError.storageFull("x").isDiskFull)
        #expect(!StoreError.sqlite(code: 5, message: "busy", operation: "exec").isDiskFull)
        #expect(!StoreError.sqlite(code: 10 | (4 << 8), message: "disk I/O error", operation: "exec").isDiskFull)
        #expect(!StoreError.closed.isDiskFull)
    }

    /// The reserve is allocated at open, and a store that is not full is ready without
    /// touching the probe file.
    @Test func theReserveIsHeldFromTheStart() throws {
        let dir = TemporaryDirectory()
        let store = try SQLiteTreeStore(directory: dir.path, reserveBytes: 64 * 1024)
        defer { store.close() }
        let reserve = try FileManager.default.attributesOfItem(atPath: dir.path + "/" + DiskSpace.reserveFileName)
        #expect((reserve[.size] as? Int) == 64 * 1024)
        #expect((reserve[.posixPermissions] as? Int) == 0o600)
        #expect(!store.isStorageFull)
        #expect(store.space.readinessProblem() == nil)
        #expect(!FileManager.default.fileExists(atPath: dir.path + "/" + DiskSpace.probeFileName))
    }
}
