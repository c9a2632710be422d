import Foundation
import HearthStore
import HearthSystem

/// `hearth backup` and `hearth restore`: a data directory's database and signing keys.
///
/// A backup is a directory holding the database file of a `LocalStoreFormat` (the embedded
/// engine's `hearth.sqlite`: a consistent snapshot taken while the server runs, checked,
/// one self-contained file) and `keys/` (the signing keys, so ID tokens issued before the
/// backup still verify after a restore). It is built under a temporary
/// name beside the destination and renamed into place when complete; every file is 0600,
/// every directory 0700.
public enum DataDirectoryBackup {
    /// The signing keys' folder inside a data directory and inside a backup (`KeyRing`).
    public static let keysFolder = "keys"

    /// Backs up `dataDirectory`, a store in `format`, to the new directory `destination`.
    public static func backup(dataDirectory: String, format: any LocalStoreFormat, to destination: String) throws(MaintenanceError) {
        let database = dataDirectory + "/" + format.databaseFileName
        guard exists(database) else { throw .missing(path: database) }
        try build(destination, wrap: { $0 }) { partial throws(MaintenanceError) in
            try format.backup(databaseAt: database, to: partial + "/" + format.databaseFileName)
            try copyKeys(from: dataDirectory + "/" + keysFolder, to: partial + "/" + keysFolder, replacing: false)
        }
    }

    /// Backs up a store of any engine (SQLite or PostgreSQL) to the new directory
    /// `destination`, in the same form as a data directory's backup, so `restore` puts it
    /// back into any engine: the store is copied through the engine protocol
    /// (`StoreTransfer`: the tree from one snapshot, then the accounts, keys and console
    /// administrators) into a fresh store in `format`, which is checked before it is
    /// renamed into place.
    public static func backup(engine: any StorageEngine, format: any LocalStoreFormat, to destination: String) throws -> StoreTransfer.Summary {
        try build(destination, wrap: { $0 as any Error }) { partial in
            let snapshot = try format.open(directory: partial)
            let summary: StoreTransfer.Summary
            do {
                summary = try StoreTransfer.copy(from: engine, to: snapshot, destinationName: partial)
            } catch {
                snapshot.close()
                throw error
            }
            snapshot.close()
            // A backup holds the database and the keys only (not the store's space reserve).
            for name in try FileManager.default.contentsOfDirectory(atPath: partial)
            where name != format.databaseFileName && name != keysFolder {
                try FileManager.default.removeItem(atPath: partial + "/" + name)
            }
            try format.verify(databaseAt: partial + "/" + format.databaseFileName)
            try LocalFiles.syncFile(partial + "/" + format.databaseFileName)
            return summary
        }
    }

    /// Builds a backup with `fill` in a new directory under a temporary name beside
    /// `destination` (0700), then renames it into place; what was built is removed when
    /// anything fails. `wrap` makes this type's own failures the caller's error type.
    private static func build<T, E: Error>(_ destination: String, wrap: (MaintenanceError) -> E,
                                           _ fill: (_ partial: String) throws(E) -> T) throws(E) -> T {
        var destination = destination
        while destination.count > 1, destination.hasSuffix("/") { destination.removeLast() }
        guard !exists(destination) else { throw wrap(.exists(path: destination)) }
        let partial = destination + ".partial-\(getpid())"
        do throws(MaintenanceError) { try createDirectory(partial) } catch { throw wrap(error) }
        do throws(E) {
            let result = try fill(partial)
            do throws(MaintenanceError) {
                try LocalFiles.syncFile(partial)
                // rename() replaces an empty directory that appeared meanwhile, never one
                // with content (ENOTEMPTY) or a file (ENOTDIR).
                guard !exists(destination) else { throw .exists(path: destination) }
                do throws(SystemError) {
                    try Syscall.rename(partial, to: destination)
                } catch {
                    let code = error.errno
                    throw code == ENOTEMPTY || code == EEXIST || code == ENOTDIR
                        ? .exists(path: destination) : .io(operation: "rename", path: destination, errno: code)
                }
                try LocalFiles.syncFile(parent(of: destination))
            } catch {
                throw wrap(error)
            }
            return result
        } catch {
            try? FileManager.default.removeItem(atPath: partial)
            throw error
        }
    }

    /// Restores a backup (made by either `backup`) into a store of any engine, which must
    /// be empty: the backup is verified and put into a private temporary directory in
    /// `format` (as a restore into a data directory does), then copied through the engine
    /// protocol.
    public static func restore(from source: String, format: any LocalStoreFormat, into engine: any StorageEngine,
                               destinationName: String) throws -> StoreTransfer.Summary {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: source, isDirectory: &isDirectory) else { throw MaintenanceError.missing(path: source) }
        let staging = FileManager.default.temporaryDirectory.path + "/hearth-restore-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        try createDirectory(staging)
        defer { try? FileManager.default.removeItem(atPath: staging) }
        try restore(from: source, format: format, intoDataDirectory: staging, force: false)
        let backup = try format.open(directory: staging)
        defer { backup.close() }
        return try StoreTransfer.copy(from: backup, to: engine, destinationName: destinationName)
    }

    /// Restores a backup (a backup directory, or a bare database file in `format`) into
    /// `dataDirectory`: the database first (`LocalStoreFormat.restore`: verified, refused if
    /// one exists unless `force`, and while in use), then the backup's keys, added to the
    /// directory's own, its current key becoming the signing key.
    public static func restore(from source: String, format: any LocalStoreFormat, intoDataDirectory dataDirectory: String,
                               force: Bool) throws(MaintenanceError) {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: source, isDirectory: &isDirectory) else { throw .missing(path: source) }
        let database = isDirectory.boolValue ? source + "/" + format.databaseFileName : source
        try format.restore(databaseAt: database, intoDirectory: dataDirectory, force: force)
        if isDirectory.boolValue {
            try copyKeys(from: source + "/" + keysFolder, to: dataDirectory + "/" + keysFolder, replacing: true)
        }
    }

    /// Copies the key files (`*.key`, `current`) of `source` into `destination` (created
    /// 0700), each through a temporary file renamed into place; `current` last. Nothing to
    /// do without a `source` folder.
    static func copyKeys(from source: String, to destination: String, replacing: Bool) throws(MaintenanceError) {
        guard exists(source) else { return }
        let names: [String]
        do {
            names = try FileManager.default.contentsOfDirectory(atPath: source)
        } catch {
            throw .io(operation: "list", path: source, errno: EIO)
        }
        try LocalFiles.makeDirectory(destination)
        let keys = names.filter { $0.hasSuffix(".key") }.sorted() + (names.contains("current") ? ["current"] : [])
        for name in keys {
            let target = destination + "/" + name
            if !replacing, exists(target) { throw .exists(path: target) }
            try copyFile(from: source + "/" + name, to: target)
        }
        try LocalFiles.syncFile(destination)
    }

    /// Copies one small file (mode 0600): flushed, then renamed over `destination`.
    static func copyFile(from source: String, to destination: String) throws(MaintenanceError) {
        guard let contents = FileManager.default.contents(atPath: source) else { throw .io(operation: "read", path: source, errno: EIO) }
        let output = try OutputFile(path: destination)
        try output.append([UInt8](contents))
        try output.commit()
    }

    /// Removes a data directory a failed restore created: its lock file and whatever the
    /// restore left, then the directory.
    public static func removeCreatedDirectory(_ directory: String) {
        try? FileManager.default.removeItem(atPath: directory)
    }

    /// Whether anything has the name `path` (a symbolic link counts, wherever it points).
    public static func exists(_ path: String) -> Bool {
        (try? Syscall.status(path, followingLinks: false)) != nil
    }

    /// Creates the directory `path` (0700), which must not exist yet.
    private static func createDirectory(_ path: String) throws(MaintenanceError) {
        do throws(SystemError) {
            guard try Syscall.makeDirectory(path, mode: LocalFiles.directoryMode) else {
                throw SystemError(errno: EEXIST, call: "mkdir")
            }
        } catch {
            throw .io(operation: "create directory", path: path, errno: error.errno)
        }
    }

    static func parent(of path: String) -> String {
        let trimmed = path.hasSuffix("/") ? String(path.dropLast()) : path
        guard let slash = trimmed.lastIndex(of: "/") else { return "." }
        return slash == trimmed.startIndex ? "/" : String(trimmed[..<slash])
    }
}
