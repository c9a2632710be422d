#if canImport(Glibc)
import Glibc
#endif

/// A failed system call: the raw `errno` and the call's name, nothing else (no addresses,
/// no payload), so it is safe to log.
public struct SystemError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The `errno` value the call left.
    public let errno: Int32
    /// The system call, e.g. "bind".
    public let call: String

    public init(errno: Int32, call: String) {
        self.errno = errno
        self.call = call
    }

    public var description: String {
        "\(call) failed: \(String(cString: strerror(errno))) (errno \(errno))"
    }
}
