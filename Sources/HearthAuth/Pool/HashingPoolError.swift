/// Why `HashingPool` did not run a job.
public enum HashingPoolError: Error, Sendable, Hashable, CustomStringConvertible {
    /// Every worker is busy and the backlog is full: shed the request (HTTP 429 or 503
    /// with `Retry-After`, docs/design.md §6) rather than queue unbounded memory.
    case overloaded

    public var description: String {
        switch self {
        case .overloaded: return "password hashing is overloaded; try again later"
        }
    }
}
