#if canImport(Glibc)
import Glibc
#endif
import HearthStore
import HearthSystem

/// The SQLite engine's signing keys: files beside the database (docs/design.md §6).
/// `<directory>/<kid>.key` holds the base64 raw private key (mode 0600, folder 0700) and
/// `<directory>/current` names the key that signs. Each file is written under a temporary
/// name, flushed and renamed, the key before `current` names it.
public struct FileKeyStore: SigningKeyStore {
    public let directory: String

    public init(directory: String) {
        self.directory = directory
    }

    public struct Failure: Error, CustomStringConvertible {
        public let description: String
    }

    public func load() throws -> StoredSigningKeys? {
        guard let current = try Self.read(directory + "/current") else { return nil }
        guard let folder = opendir(directory) else { throw Failure(description: "cannot list \(directory): errno \(errno)") }
        defer { closedir(folder) }
        var keys: [String: String] = [:]
        while let entry = readdir(folder) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix(while: { $0 != 0 }), as: UTF8.self)
            }
            guard name.hasSuffix(".key") else { continue }
            let kid = String(name.dropLast(4))
            guard let text = try Self.read(directory + "/" + name) else { continue }
            keys[kid] = text
        }
        return StoredSigningKeys(current: current, keys: keys)
    }

    public func add(kid: String, privateKey: String) throws {
        do throws(SystemError) {
            _ = try Syscall.makeDirectory(directory, mode: DatabaseFile.directoryMode)
        } catch {
            throw Failure(description: "cannot create \(directory): errno \(error.errno)")
        }
        try Self.write(privateKey, to: "\(directory)/\(kid).key")
        try Self.write(kid, to: "\(directory)/current")
    }

    public func contains(kid: String) -> Bool {
        Syscall.exists("\(directory)/\(kid).key")
    }

    /// The most a key file may hold: a key is a few dozen bytes of base64.
    static let maxFileBytes = 1 << 16

    /// The file's text without surrounding white space; nil when it does not exist.
    static func read(_ path: String) throws -> String? {
        let bytes: [UInt8]
        do throws(SystemError) {
            bytes = try Syscall.readFile(path, limit: maxFileBytes + 1)
        } catch where error.errno == ENOENT {
            return nil
        } catch {
            throw Failure(description: "cannot read \(path): errno \(error.errno)")
        }
        if bytes.count > maxFileBytes { throw Failure(description: "\(path) is too large") }
        return String(decoding: bytes, as: UTF8.self).trimmingWhitespace()
    }

    /// Writes `text` under a temporary name beside `path`, syncs it and renames it over
    /// `path`; the temporary file is removed on every failure.
    static func write(_ text: String, to path: String) throws {
        let temporary = path + ".partial-\(getpid())"
        let fd: Int32
        do throws(SystemError) {
            fd = try Syscall.openFile(temporary, O_WRONLY | O_CREAT | O_TRUNC, mode: DatabaseFile.fileMode)
        } catch {
            throw Failure(description: "cannot create \(temporary): errno \(error.errno)")
        }
        do throws(SystemError) {
            try Syscall.writeAll(fd, Array(text.utf8))
            try Syscall.syncAll(fd)
        } catch {
            try? Syscall.close(fd)
            _ = try? Syscall.removeFile(temporary)
            throw Failure(description: "cannot write \(temporary): errno \(error.errno)")
        }
        try? Syscall.close(fd)  // synced: what close could report is already on disk
        do throws(SystemError) {
            try Syscall.rename(temporary, to: path)
        } catch {
            _ = try? Syscall.removeFile(temporary)
            throw Failure(description: "cannot write \(path): errno \(error.errno)")
        }
    }
}

extension String {
    fileprivate func trimmingWhitespace() -> String {
        let scalars = unicodeScalars
        guard let first = scalars.firstIndex(where: { !$0.properties.isWhitespace }),
              let last = scalars.lastIndex(where: { !$0.properties.isWhitespace }) else { return "" }
        return String(scalars[first...last])
    }
}
