#if canImport(Glibc)
import Glibc
#endif
import HearthStore

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
        if mkdir(directory, DatabaseFile.directoryMode) != 0 && errno != EEXIST {
            throw Failure(description: "cannot create \(directory): errno \(errno)")
        }
        try Self.write(privateKey, to: "\(directory)/\(kid).key")
        try Self.write(kid, to: "\(directory)/current")
    }

    public func contains(kid: String) -> Bool {
        access("\(directory)/\(kid).key", F_OK) == 0
    }

    /// The file's text without surrounding white space; nil when it does not exist.
    static func read(_ path: String) throws -> String? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        if fd < 0 {
            if errno == ENOENT { return nil }
            throw Failure(description: "cannot read \(path): errno \(errno)")
        }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let n = buffer.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if n < 0 {
                if errno == EINTR { continue }
                throw Failure(description: "cannot read \(path): errno \(errno)")
            }
            if n == 0 { break }
            bytes += buffer[0..<n]
            if bytes.count > 1 << 16 { throw Failure(description: "\(path) is too large") }
        }
        let text = String(decoding: bytes, as: UTF8.self)
        return text.trimmingWhitespace()
    }

    static func write(_ text: String, to path: String) throws {
        let temporary = path + ".partial-\(getpid())"
        let fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, DatabaseFile.fileMode)
        guard fd >= 0 else { throw Failure(description: "cannot create \(temporary): errno \(errno)") }
        let bytes = Array(text.utf8)
        var done = 0
        while done < bytes.count {
            let n = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress! + done, $0.count - done) }
            if n < 0 {
                if errno == EINTR { continue }
                close(fd)
                unlink(temporary)
                throw Failure(description: "cannot write \(temporary): errno \(errno)")
            }
            done += n
        }
        let synced = fsync(fd) == 0
        close(fd)
        guard synced, rename(temporary, path) == 0 else {
            unlink(temporary)
            throw Failure(description: "cannot write \(path): errno \(errno)")
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
