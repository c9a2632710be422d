import HearthSystem
/// Why a server could not start, beyond a failed system call (those are `SystemError`).
public enum HTTPServerError: Error, Sendable, Equatable, CustomStringConvertible {
    /// `host` is not an IPv4 or IPv6 address literal (names are never resolved).
    case invalidHost(String)
    /// `port` is outside 0...65535.
    case invalidPort(Int)
    /// `start()` was called twice, or after `shutdown`.
    case alreadyStarted

    public var description: String {
        switch self {
        case .invalidHost(let host): return "not an IPv4 or IPv6 address literal: \(host)"
        case .invalidPort(let port): return "port out of range: \(port)"
        case .alreadyStarted: return "the server was already started"
        }
    }
}
