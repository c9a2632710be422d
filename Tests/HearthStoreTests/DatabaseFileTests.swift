import Dispatch
import Foundation
import HearthJSON
import Synchronization
import Testing
@testable import HearthSQLite
@testable import HearthStore

/// `DatabaseFile`: online backups beside a writing store, verified restores.
@Suite struct DatabaseFileTests {
    let dir = TemporaryDirectory()
    let out = TemporaryDirectory()

    var database: String { dir.path + "/" + SQLiteTreeStore.fileName }

    static func mode(_ path: String) -> Int {
        ((try? FileManager.default.attributesOfItem(atPath: path)[.posixPermissions]) as? Int) ?? -1
    }

    /// Writes keep being committed on another thread while the backup runs; every write
    /// acknowledged before it started is in the copy, which passes the integrity check.
    @Test func aBackupUnderWritesHoldsEveryEarlierWrite() throws {
        let store = try SQLiteTreeStore(directory: dir.path)
        defer { store.close() }
        let acknowledged = Atomic<Int>(0)
        let stop = Atomic<Bool>(false)
        let done = DispatchSemaphore(value: 0)
        let started = DispatchSemaphore(value: 0)
        let padding = JSONValue.string(String(repeating: "x", count: 2000))
        DispatchQueue.global().async {
            var i = 0
            while !stop.load(ordering: .relaxed) {
                _ = try? store.put("w/k\(i)", obj(["i": .int(Int64(i)), "pad": padding]))
                acknowledged.store(i + 1, ordering: .relaxed)
                if i == 300 { started.signal() }
                i += 1
            }
            done.signal()
        }
        started.wait()
        let before = acknowledged.load(ordering: .relaxed)
        let copy = out.path + "/copy.sqlite"
        try DatabaseFile.backup(databaseAt: database, to: copy)
        stop.store(true, ordering: .relaxed)
        done.wait()
        #expect(Self.mode(copy) == 0o600)
        #expect(try DatabaseFile.verify(databaseAt: copy) == Schema.currentVersion)

        let restored = TemporaryDirectory()
        try DatabaseFile.restore(from: copy, intoDirectory: restored.path, force: false)
        let reopened = try SQLiteTreeStore(directory: restored.path)
        defer { reopened.close() }
        let keys = Set(try reopened.readSync { try $0.childKeys(at: path("w")) })
        let missing = (0..<before).filter { !keys.contains("k\($0)") }
        #expect(missing.isEmpty, "acknowledged before the backup but missing: \(missing.prefix(5))")
        #expect(try reopened.integrityCheck() == "ok")
    }

    @Test func aBackupNeverOverwrites() throws {
        let store = try SQLiteTreeStore(directory: dir.path)
        try store.put("a", .int(1))
        store.close()
        let copy = out.path + "/copy.sqlite"
        #expect(FileManager.default.createFile(atPath: copy, contents: Data("mine".utf8)))
        #expect(throws: MaintenanceError.exists(path: copy)) { try DatabaseFile.backup(databaseAt: database, to: copy) }
        #expect(FileManager.default.contents(atPath: copy) == Data("mine".utf8))
        #expect(throws: MaintenanceError.missing(path: out.path + "/none/hearth.sqlite")) {
            try DatabaseFile.backup(databaseAt: out.path + "/none/hearth.sqlite", to: out.path + "/other")
        }
    }

    /// A restore empties the change log and moves its sequence far past anything a client
    /// may have seen, refuses an existing database unless forced, and a database in use.
    @Test func restoreRules() throws {
        let store = try SQLiteTreeStore(directory: dir.path)
        try store.put("a", .int(1))
        let seq = try store.readSync { try $0.lastChangeSeq() }
        store.close()
        let copy = out.path + "/copy.sqlite"
        try DatabaseFile.backup(databaseAt: database, to: copy)

        let target = TemporaryDirectory()
        try DatabaseFile.restore(from: copy, intoDirectory: target.path, force: false)
        #expect(Self.mode(target.path + "/hearth.sqlite") == 0o600)
        #expect(throws: MaintenanceError.exists(path: target.path + "/hearth.sqlite")) {
            try DatabaseFile.restore(from: copy, intoDirectory: target.path, force: false)
        }
        let running = try SQLiteTreeStore(directory: target.path)
        #expect(try running.get("a") == .int(1))
        #expect(try running.changes(after: 0, limit: 10).changes.isEmpty)
        let restoredSeq = try running.readSync { try $0.lastChangeSeq() }
        #expect(restoredSeq == seq + DatabaseFile.restoreSequenceGap)
        try running.put("b", .int(2))
        #expect(throws: MaintenanceError.inUse(path: target.path + "/hearth.sqlite")) {
            try DatabaseFile.restore(from: copy, intoDirectory: target.path, force: true)
        }
        running.close()
        try DatabaseFile.restore(from: copy, intoDirectory: target.path, force: true)
        let replaced = try SQLiteTreeStore(directory: target.path)
        defer { replaced.close() }
        #expect(try replaced.get("") == obj(["a": .int(1)]))
        #expect(try replaced.readSync { try $0.lastChangeSeq() } == restoredSeq + 1 + DatabaseFile.restoreSequenceGap)
        #expect(try replaced.integrityCheck() == "ok")
    }

    @Test func restoreChecksTheFileFirst() throws {
        let target = TemporaryDirectory()
        let garbage = out.path + "/garbage.sqlite"
        #expect(FileManager.default.createFile(atPath: garbage, contents: Data(repeating: 7, count: 8192)))
        #expect(throws: MaintenanceError.self) { try DatabaseFile.restore(from: garbage, intoDirectory: target.path, force: false) }

        // A valid SQLite file that is not Hearth's.
        let foreign = out.path + "/foreign.sqlite"
        do {
            let connection = try SQLiteConnection(path: foreign, mode: .readWriteCreate)
            try connection.execute("CREATE TABLE t(x); INSERT INTO t VALUES (1)")
        }
        #expect(throws: MaintenanceError.notHearthDatabase(path: foreign, reason: "no Hearth schema (user_version 0)")) {
            try DatabaseFile.restore(from: foreign, intoDirectory: target.path, force: false)
        }

        // A Hearth database from a newer binary.
        let store = try SQLiteTreeStore(directory: dir.path)
        store.close()
        let newer = out.path + "/newer.sqlite"
        try DatabaseFile.backup(databaseAt: database, to: newer)
        do {
            let connection = try SQLiteConnection(path: newer, mode: .readWriteCreate)
            try connection.execute("PRAGMA user_version = 99")
        }
        #expect(throws: MaintenanceError.schemaTooNew(found: 99, known: Schema.currentVersion)) {
            try DatabaseFile.restore(from: newer, intoDirectory: target.path, force: false)
        }

        // A damaged page: the integrity check refuses it.
        let damaged = out.path + "/damaged.sqlite"
        try populated(count: 400).copy(to: damaged)
        var bytes = [UInt8](FileManager.default.contents(atPath: damaged)!)
        for i in 4096..<bytes.count { bytes[i] = 0x5A }
        #expect(FileManager.default.createFile(atPath: damaged, contents: Data(bytes)))
        #expect(throws: MaintenanceError.self) { try DatabaseFile.restore(from: damaged, intoDirectory: target.path, force: false) }
        #expect(!FileManager.default.fileExists(atPath: target.path + "/hearth.sqlite"))
        #expect(!FileManager.default.fileExists(atPath: target.path + "/hearth.sqlite.restoring"))
    }

    /// A backup of a database holding `count` leaves, as a file path.
    func populated(count: Int) throws -> String {
        let source = TemporaryDirectory()
        let store = try SQLiteTreeStore(directory: source.path)
        for i in 0..<count { try store.put("p/k\(i)", .string(String(repeating: "v", count: 100))) }
        store.close()
        let copy = out.path + "/populated-\(count).sqlite"
        try DatabaseFile.backup(databaseAt: source.path + "/" + SQLiteTreeStore.fileName, to: copy)
        return copy
    }
}

extension String {
    /// Copies the file at this path to `destination`.
    func copy(to destination: String) throws {
        try FileManager.default.copyItem(atPath: self, toPath: destination)
    }
}
