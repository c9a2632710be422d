import Foundation
import HearthJSON
import Testing
@testable import HearthSQLite
@testable import HearthStore

/// The writer's WAL writes are gathered into a few `pwrite`s per commit
/// (`WALWriteCoalescing`), only where commits sync the WAL, and nothing written
/// through it is lost or seen torn.
@Suite struct WALWriteCoalescingTests {
    let dir = TemporaryDirectory()

    func open(_ synchronous: StoreOptions.Synchronous) throws -> SQLiteTreeStore {
        var options = StoreOptions()
        options.synchronous = synchronous
        return try SQLiteTreeStore(directory: dir.path, options: options)
    }

    /// Write system calls made by this thread so far (`syscw` in /proc/thread-self/io).
    static func writeCalls() throws -> Int {
        let text = try String(contentsOfFile: "/proc/thread-self/io", encoding: .utf8)
        let line = try #require(text.split(separator: "\n").first { $0.hasPrefix("syscw:") })
        return try #require(Int(line.dropFirst("syscw:".count).trimmingCharacters(in: .whitespaces)))
    }

    /// One transaction on a bare connection in WAL mode with synchronous FULL: `rows`
    /// rows of 3,000 bytes, each on a page of its own or nearly. Returns the write system
    /// calls this thread made for it.
    static func commitRows(_ rows: Int, at database: String, coalescing: Bool) throws -> Int {
        let connection = try SQLiteConnection(path: database, mode: .readWriteCreate, coalescingWALWrites: coalescing)
        try connection.execute("PRAGMA journal_mode = WAL")
        try connection.execute("PRAGMA synchronous = FULL")
        try connection.execute("CREATE TABLE t (k INTEGER PRIMARY KEY, v TEXT NOT NULL)")
        let before = try writeCalls()
        try connection.execute("BEGIN IMMEDIATE")
        for index in 0..<rows {
            try connection.execute("INSERT INTO t VALUES (\(index), printf('%.3000c', 'x'))")
        }
        try connection.execute("COMMIT")
        let calls = try writeCalls() - before
        #expect(try connection.scalarInt("SELECT count(*) FROM t WHERE length(v) = 3000") == Int64(rows))
        #expect(try connection.scalarText("PRAGMA integrity_check") == "ok")
        return calls
    }

    @Test func aCommitsFramesLeaveInAFewWritesInsteadOfTwoEach() throws {
        let rows = 200  // ~200 pages: ~820 KiB of WAL, several `maxWriteBytes` chunks
        let plain = try Self.commitRows(rows, at: dir.path + "/plain.sqlite", coalescing: false)
        let gathered = try Self.commitRows(rows, at: dir.path + "/gathered.sqlite", coalescing: true)
        // The default VFS: a header and a page per frame.
        #expect(plain >= 2 * rows, "plain: \(plain)")
        // Gathered: the frames' bytes in chunks of `maxWriteBytes`, plus the WAL header.
        let bytes = rows * (4_096 + 24)
        #expect(gathered <= bytes / WALWriteCoalescing.maxWriteBytes + 10, "gathered: \(gathered)")
        #expect(gathered < plain / 10)
    }

    @Test func onlyAWriterWhoseCommitsSyncTheWALUsesIt() throws {
        let full = try open(.full)
        #expect(try full.onWriter { $0.vfsName } == WALWriteCoalescing.name)
        #expect(WALWriteCoalescing.name != nil)
        full.close()
        let normal = try open(.normal)
        #expect(try normal.onWriter { $0.vfsName } != WALWriteCoalescing.name)
        normal.close()
    }

    @Test func readersAndAReopenedStoreSeeEveryCommittedWrite() throws {
        let store = try open(.full)
        // One write larger than the buffer (`maxBufferedBytes`), so it is written out
        // before its commit, then many small commits read back while the writer goes on.
        let big = JSONValue.object(Dictionary(uniqueKeysWithValues: (0..<1_500).map { index in
            (JSONKey("c\(index)"), JSONValue.string(String(repeating: "b", count: 4_000)))
        }))
        #expect(1_500 * 4_000 > WALWriteCoalescing.maxBufferedBytes)
        try store.put("big", big)
        for index in 0..<300 {
            try store.put("small/k\(index)", .int(Int64(index)))
            #expect(try store.get("small/k\(index)") == .int(Int64(index)))
        }
        #expect(try store.get("big") == big)
        store.close()

        let reopened = try open(.full)
        #expect(try reopened.get("big") == big)
        #expect(try reopened.get("small/k299") == .int(299))
        #expect(try reopened.integrityCheck() == "ok")
        reopened.close()
    }
}
