#if canImport(Glibc)
import Glibc
#endif

/// The user this process runs as (its effective uid, the one file permissions are checked
/// against) and that user's name when the password database has one: what an error about
/// permissions names, so the operator knows whose the files must be.
public struct ProcessUser: Sendable, Equatable, CustomStringConvertible {
    public let uid: UInt32
    /// nil when no entry has this uid (a container's arbitrary uid).
    public let name: String?

    public init(uid: UInt32, name: String?) {
        self.uid = uid
        self.name = name
    }

    /// The longest password-database entry read (name, home, shell...); a longer one is
    /// taken as nameless rather than read with ever larger buffers.
    static let maxEntryBytes = 16 * 1024

    /// The process's effective user, read now.
    public static func current() -> ProcessUser {
        let uid = geteuid()
        var entry = passwd()
        var result: UnsafeMutablePointer<passwd>?
        var buffer = [CChar](repeating: 0, count: maxEntryBytes)
        let code = getpwuid_r(uid, &entry, &buffer, buffer.count, &result)
        guard code == 0, result != nil, let name = entry.pw_name else { return ProcessUser(uid: uid, name: nil) }
        return ProcessUser(uid: uid, name: String(cString: name))
    }

    /// `user hearth (uid 999)`, or `uid 1000` without a name.
    public var description: String {
        name.map { "user \($0) (uid \(uid))" } ?? "uid \(uid)"
    }

    /// What `chown` takes for this user: the name, else the number.
    public var owner: String { name ?? String(uid) }
}
