import CSQLite
import HearthStore
#if canImport(Glibc)
import Glibc
#endif

/// A VFS over SQLite's default one that gathers the WAL writes of a commit into one
/// `pwrite`.
///
/// SQLite writes each WAL frame as two `pwrite`s: its 24-byte header, then the page. A
/// group commit of creates writes ~90 frames, so ~180 system calls whose offsets are not
/// page-aligned (a frame is 4,120 bytes), each page touching two of the kernel's page-cache
/// pages: `pwrite` was ~6 % of the server's CPU under a create load, all of it on the
/// single writer. Here a WAL file keeps the bytes appended in order in memory and writes
/// them at once before anything that could look at them: a sync, a read, the size, a
/// truncation, a file control, a fetch, the close, or a write elsewhere in the file.
///
/// Only for a connection whose commits sync the WAL (`synchronous` FULL or EXTRA): SQLite
/// then syncs the WAL before it publishes a commit in the WAL index, so no reader can be
/// shown frames still in this buffer. With `synchronous = NORMAL` a commit is published
/// without a sync, so such a connection must not use this VFS (`SQLiteConnection`
/// decides). The database file, the journal and everything else are opened by the
/// default VFS in place, untouched.
///
/// A failed write surfaces at the call that flushed it (`SQLITE_FULL` on a full volume,
/// from the commit's sync), and the buffer is dropped: SQLite rolls the transaction back
/// and writes those frames again, at the same offsets, with the next commit.
///
/// It also lets the writer take a commit's `fdatasync` off its thread
/// (`commitDeferringSync`, `CommitSyncer`): inside that call the commit's sync writes the
/// buffer and returns without syncing, and the caller owes the sync. Only that one sync:
/// the sync of a new WAL header (SQLite's guard against a header and the frames after it
/// reaching the disk out of order), a checkpoint's and every sync outside the call sync
/// as before.
enum WALWriteCoalescing {
    /// The bytes one WAL file holds back at most; past it they are written and gathering
    /// starts again (a group commit of creates is ~90 frames, ~370 KiB). Allocated when
    /// the writer opens its WAL: one buffer per open database.
    static let maxBufferedBytes = 1 << 20
    /// The bytes handed to the default VFS per write: its `unixWrite` keeps only the low 17
    /// bits of a length (`nBuf &= 0x1ffff` in os_unix.c's `seekAndWriteFd`), so a longer
    /// write comes back short or, at a multiple of 128 KiB, as `SQLITE_FULL`. A commit of
    /// ~90 frames is then 6 writes instead of ~180.
    static let maxWriteBytes = 64 << 10

    /// The VFS's name, for `sqlite3_open_v2`; registered once per process, on first use.
    /// SQLite keeps its VFS list process-wide: this one is immutable once registered (a
    /// table of functions over the default VFS), and holds no state of its own; each
    /// open WAL file owns its buffer.
    static let name: String? = register()

    private static func register() -> String? {
        guard let base = sqlite3_vfs_find(nil) else { return nil }
        let vfs = UnsafeMutablePointer<sqlite3_vfs>.allocate(capacity: 1)
        vfs.initialize(to: base.pointee)
        let name = "hearth-wal-coalescing"
        vfs.pointee.zName = UnsafePointer(strdup(name))
        vfs.pointee.pNext = nil
        vfs.pointee.pAppData = UnsafeMutableRawPointer(base)
        vfs.pointee.szOsFile = Int32(headerBytes) + base.pointee.szOsFile
        vfs.pointee.xOpen = { vfs, name, file, flags, outFlags in
            WALWriteCoalescing.open(vfs, name, file, flags, outFlags)
        }
        guard sqlite3_vfs_register(vfs, 0) == SQLITE_OK else { return nil }
        return name
    }

    // Extended result codes (sqlite3.h defines them as macros Swift cannot import).
    private static let ioErrWrite = SQLITE_IOERR | (3 << 8)
    private static let ioErrUnlock = SQLITE_IOERR | (8 << 8)
    private static let ioErrLock = SQLITE_IOERR | (15 << 8)

    // MARK: Layout of a WAL file: our sqlite3_file, the buffer, then the default VFS's file

    /// `pMethods` (8 bytes), then the `Buffer`'s retained pointer (8 bytes).
    private static let headerBytes = 16

    private static func real(_ file: UnsafeMutablePointer<sqlite3_file>) -> UnsafeMutablePointer<sqlite3_file> {
        (UnsafeMutableRawPointer(file) + headerBytes).assumingMemoryBound(to: sqlite3_file.self)
    }

    /// Where a WAL file keeps its `Buffer` (retained while the file is open).
    private static func bufferSlot(_ file: UnsafeMutablePointer<sqlite3_file>) -> UnsafeMutablePointer<UnsafeMutableRawPointer> {
        (UnsafeMutableRawPointer(file) + 8).assumingMemoryBound(to: UnsafeMutableRawPointer.self)
    }

    private static func buffer(_ file: UnsafeMutablePointer<sqlite3_file>) -> Buffer {
        Unmanaged<Buffer>.fromOpaque(bufferSlot(file).pointee).takeUnretainedValue()
    }

    /// What one WAL file holds back: `count` bytes that belong at `start` in the file.
    /// Used only from the calls of the connection that opened the file, one at a time.
    private final class Buffer {
        let bytes = UnsafeMutableRawPointer.allocate(byteCount: WALWriteCoalescing.maxBufferedBytes, alignment: 16)
        var start: Int64 = 0
        var count = 0
        /// A descriptor on the same file, for a sync off the writer's thread (nil when it
        /// could not be opened: every sync is then SQLite's own).
        let syncFile: WALSyncFile?
        /// Set by `commitDeferringSync` for the one sync it may skip.
        var mayDeferSync = false
        /// The sync was skipped: the caller owes it.
        var deferredSync = false
        /// The WAL header (offset 0) was written since the last sync: the next sync is the
        /// header's, and always made.
        var headerUnsynced = false
        /// Syncs handed to the default VFS (tests).
        var syncsMade = 0

        init(syncFile: WALSyncFile?) { self.syncFile = syncFile }

        deinit { bytes.deallocate() }
    }

    /// Runs `commit` (the writer's COMMIT) letting its sync of the WAL be skipped, and
    /// returns the WAL file when it was: the caller must sync it (`CommitSyncer`) before it
    /// tells anyone the commit is durable. Nil when the commit synced the WAL itself or
    /// wrote no frame, or the connection's WAL is not this VFS's.
    static func commitDeferringSync(on connection: SQLiteConnection,
                                    _ commit: () throws(StoreError) -> Void) throws(StoreError) -> WALSyncFile? {
        guard let held = buffer(of: connection.handle), held.syncFile != nil else {
            try commit()
            return nil
        }
        held.mayDeferSync = true
        held.deferredSync = false
        defer {
            held.mayDeferSync = false
            held.deferredSync = false
        }
        try commit()
        return held.deferredSync ? held.syncFile : nil
    }

    /// The buffer of the WAL file `db` has open, when that file is this VFS's.
    private static func buffer(of db: OpaquePointer) -> Buffer? {
        var pointer: UnsafeMutablePointer<sqlite3_file>?
        guard sqlite3_file_control(db, "main", SQLITE_FCNTL_JOURNAL_POINTER, &pointer) == SQLITE_OK,
              let file = pointer, file.pointee.pMethods == UnsafePointer(methods) else { return nil }
        return buffer(file)
    }

    /// The WAL file a connection of this VFS has open (tests).
    static func syncFile(of connection: SQLiteConnection) -> WALSyncFile? {
        buffer(of: connection.handle)?.syncFile
    }

    /// The syncs of its WAL a connection of this VFS made itself (tests).
    static func syncsMade(by connection: SQLiteConnection) -> Int? {
        buffer(of: connection.handle)?.syncsMade
    }

    /// The WAL's sync: skipped once inside `commitDeferringSync`, unless the header was
    /// written since the last sync.
    private static func sync(_ file: UnsafeMutablePointer<sqlite3_file>, _ flags: Int32) -> Int32 {
        let held = buffer(file)
        let rc = flush(file)
        if rc != SQLITE_OK { return rc }
        if held.mayDeferSync, !held.headerUnsynced {
            held.mayDeferSync = false
            held.deferredSync = true
            return SQLITE_OK
        }
        let inner = real(file)
        guard let sync = inner.pointee.pMethods?.pointee.xSync else { return SQLITE_IOERR }
        let synced = sync(inner, flags)
        held.syncsMade += 1
        if synced == SQLITE_OK { held.headerUnsynced = false }
        return synced
    }

    // MARK: Opening

    private static func open(_ vfs: UnsafeMutablePointer<sqlite3_vfs>?, _ name: sqlite3_filename?,
                             _ file: UnsafeMutablePointer<sqlite3_file>?, _ flags: Int32,
                             _ outFlags: UnsafeMutablePointer<Int32>?) -> Int32 {
        guard let vfs, let file, let baseRaw = vfs.pointee.pAppData else { return SQLITE_MISUSE }
        let base = baseRaw.assumingMemoryBound(to: sqlite3_vfs.self)
        guard let baseOpen = base.pointee.xOpen else { return SQLITE_MISUSE }
        guard flags & SQLITE_OPEN_WAL != 0 else {
            // Everything but the WAL: the default VFS's file, in place, with its own methods.
            return baseOpen(base, name, file, flags, outFlags)
        }
        let inner = real(file)
        inner.pointee.pMethods = nil
        file.pointee.pMethods = nil
        let rc = baseOpen(base, name, inner, flags, outFlags)
        guard rc == SQLITE_OK, inner.pointee.pMethods != nil else {
            if let close = inner.pointee.pMethods?.pointee.xClose { _ = close(inner) }
            return rc == SQLITE_OK ? SQLITE_CANTOPEN : rc
        }
        // A descriptor of our own on the file SQLite just opened (nil: syncs stay SQLite's).
        let syncFile = name.flatMap { try? WALSyncFile(path: String(cString: $0)) }
        bufferSlot(file).pointee = Unmanaged.passRetained(Buffer(syncFile: syncFile)).toOpaque()
        file.pointee.pMethods = UnsafePointer(methods)
        return SQLITE_OK
    }

    // MARK: The WAL file's methods

    /// Writes what is held back; drops it whatever the outcome.
    private static func flush(_ file: UnsafeMutablePointer<sqlite3_file>) -> Int32 {
        let held = buffer(file)
        guard held.count > 0 else { return SQLITE_OK }
        let count = held.count
        held.count = 0
        let inner = real(file)
        guard let write = inner.pointee.pMethods?.pointee.xWrite else { return ioErrWrite }
        var done = 0
        while done < count {
            let chunk = min(count - done, maxWriteBytes)
            let rc = write(inner, held.bytes + done, Int32(chunk), held.start + Int64(done))
            if rc != SQLITE_OK { return rc }
            done += chunk
        }
        return SQLITE_OK
    }

    private static func write(_ file: UnsafeMutablePointer<sqlite3_file>, _ data: UnsafeRawPointer, _ amount: Int32,
                              _ offset: Int64) -> Int32 {
        let held = buffer(file)
        let size = Int(amount)
        if offset == 0 { held.headerUnsynced = true }
        // Whatever is held goes first unless this write extends it and fits.
        let extends = offset == held.start + Int64(held.count) && held.count + size <= maxBufferedBytes
        if held.count > 0, !extends || size > maxWriteBytes {
            let rc = flush(file)
            if rc != SQLITE_OK { return rc }
        }
        if size > maxWriteBytes {
            let inner = real(file)
            guard let write = inner.pointee.pMethods?.pointee.xWrite else { return ioErrWrite }
            return write(inner, data, amount, offset)
        }
        if held.count == 0 { held.start = offset }
        (held.bytes + held.count).copyMemory(from: data, byteCount: size)
        held.count += size
        return SQLITE_OK
    }

    private static func close(_ file: UnsafeMutablePointer<sqlite3_file>) -> Int32 {
        let flushed = flush(file)
        let inner = real(file)
        let closed = inner.pointee.pMethods?.pointee.xClose.map { $0(inner) } ?? SQLITE_OK
        Unmanaged<Buffer>.fromOpaque(bufferSlot(file).pointee).release()
        file.pointee.pMethods = nil
        return flushed != SQLITE_OK ? flushed : closed
    }

    /// The inner file's method table, for forwarding.
    private static func inner(_ file: UnsafeMutablePointer<sqlite3_file>?) -> (UnsafeMutablePointer<sqlite3_file>, sqlite3_io_methods)? {
        guard let file else { return nil }
        let inner = real(file)
        guard let methods = inner.pointee.pMethods?.pointee else { return nil }
        return (inner, methods)
    }

    /// Calls the inner file's method after writing what is held back.
    private static func flushed(_ file: UnsafeMutablePointer<sqlite3_file>?,
                                _ call: (UnsafeMutablePointer<sqlite3_file>, sqlite3_io_methods) -> Int32?) -> Int32 {
        guard let file, let (inner, methods) = inner(file) else { return SQLITE_IOERR }
        let rc = flush(file)
        if rc != SQLITE_OK { return rc }
        return call(inner, methods) ?? SQLITE_IOERR
    }

    // Immutable once built (a table of functions); SQLite only reads it.
    nonisolated(unsafe) private static let methods: UnsafeMutablePointer<sqlite3_io_methods> = {
        let table = UnsafeMutablePointer<sqlite3_io_methods>.allocate(capacity: 1)
        table.initialize(to: sqlite3_io_methods())
        table.pointee.iVersion = 3
        table.pointee.xClose = { file in file.map(WALWriteCoalescing.close) ?? SQLITE_IOERR }
        table.pointee.xRead = { file, data, amount, offset in
            WALWriteCoalescing.flushed(file) { inner, methods in methods.xRead?(inner, data, amount, offset) }
        }
        table.pointee.xWrite = { file, data, amount, offset in
            guard let file, let data else { return WALWriteCoalescing.ioErrWrite }
            return WALWriteCoalescing.write(file, data, amount, offset)
        }
        table.pointee.xTruncate = { file, size in
            WALWriteCoalescing.flushed(file) { inner, methods in methods.xTruncate?(inner, size) }
        }
        table.pointee.xSync = { file, flags in
            guard let file, WALWriteCoalescing.inner(file) != nil else { return SQLITE_IOERR }
            return WALWriteCoalescing.sync(file, flags)
        }
        table.pointee.xFileSize = { file, size in
            WALWriteCoalescing.flushed(file) { inner, methods in methods.xFileSize?(inner, size) }
        }
        table.pointee.xLock = { file, level in
            WALWriteCoalescing.inner(file).flatMap { inner, methods in methods.xLock?(inner, level) } ?? WALWriteCoalescing.ioErrLock
        }
        table.pointee.xUnlock = { file, level in
            WALWriteCoalescing.inner(file).flatMap { inner, methods in methods.xUnlock?(inner, level) } ?? WALWriteCoalescing.ioErrUnlock
        }
        table.pointee.xCheckReservedLock = { file, result in
            WALWriteCoalescing.inner(file).flatMap { inner, methods in methods.xCheckReservedLock?(inner, result) } ?? SQLITE_IOERR
        }
        table.pointee.xFileControl = { file, op, argument in
            WALWriteCoalescing.flushed(file) { inner, methods in methods.xFileControl?(inner, op, argument) }
        }
        table.pointee.xSectorSize = { file in
            WALWriteCoalescing.inner(file).flatMap { inner, methods in methods.xSectorSize?(inner) } ?? 4096
        }
        table.pointee.xDeviceCharacteristics = { file in
            WALWriteCoalescing.inner(file).flatMap { inner, methods in methods.xDeviceCharacteristics?(inner) } ?? 0
        }
        table.pointee.xShmMap = { file, page, size, extend, region in
            WALWriteCoalescing.inner(file).flatMap { inner, methods in methods.xShmMap?(inner, page, size, extend, region) } ?? SQLITE_IOERR
        }
        table.pointee.xShmLock = { file, offset, count, flags in
            WALWriteCoalescing.inner(file).flatMap { inner, methods in methods.xShmLock?(inner, offset, count, flags) } ?? SQLITE_IOERR
        }
        table.pointee.xShmBarrier = { file in
            if let (inner, methods) = WALWriteCoalescing.inner(file) { methods.xShmBarrier?(inner) }
        }
        table.pointee.xShmUnmap = { file, delete in
            WALWriteCoalescing.inner(file).flatMap { inner, methods in methods.xShmUnmap?(inner, delete) } ?? SQLITE_IOERR
        }
        table.pointee.xFetch = { file, offset, amount, pointer in
            WALWriteCoalescing.flushed(file) { inner, methods in
                guard let fetch = methods.xFetch else {
                    pointer?.pointee = nil
                    return SQLITE_OK
                }
                return fetch(inner, offset, amount, pointer)
            }
        }
        table.pointee.xUnfetch = { file, offset, pointer in
            WALWriteCoalescing.inner(file).flatMap { inner, methods in methods.xUnfetch?(inner, offset, pointer) } ?? SQLITE_OK
        }
        return table
    }()
}
