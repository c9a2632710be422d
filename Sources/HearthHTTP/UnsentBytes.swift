import Synchronization

/// Response bytes held for clients that have not taken them yet, all together, and their
/// bound (`HTTPLimits.maxUnsentBytes`): each connection's output not drained yet, and what
/// an application holds for a client outside any connection (a long-poll session's answers
/// waiting for the client's next poll). One per server; an application that holds answers
/// of its own shares the server's (`HTTPServerConfiguration.unsentBytes`), so one bound
/// covers every way a client that does not read can pin memory.
public final class UnsentBytes: Sendable {
    /// The bound (`HTTPLimits.maxUnsentBytes`).
    public let limit: Int
    let total = Atomic<Int>(0)
    /// Holds refused by `hold` (`HTTPServerStats.unsentRefusals` counts them with the
    /// server's own refusals).
    let refusals = Atomic<Int>(0)

    public init(limit: Int = HTTPLimits.defaultMaxUnsentBytes) {
        self.limit = limit
    }

    /// Counts `bytes` more held for a client that holds `alreadyHeld` bytes now. False, and
    /// nothing counted, when the total would pass `limit` and the client is behind already
    /// (`alreadyHeld > 0`) or `bytes` is over `HTTPLimits.alwaysSentBytes`: the rule a
    /// connection's responses and streams follow, so a small answer to a client that has
    /// taken everything else always goes. The caller releases what it counted (`release`).
    public func hold(_ bytes: Int, alreadyHeld: Int) -> Bool {
        let now = total.load(ordering: .relaxed)
        if now + bytes > limit && (alreadyHeld > 0 || bytes > HTTPLimits.alwaysSentBytes) {
            refusals.wrappingAdd(1, ordering: .relaxed)
            return false
        }
        total.wrappingAdd(bytes, ordering: .relaxed)
        return true
    }

    /// Releases `bytes` counted by `hold`.
    public func release(_ bytes: Int) {
        guard bytes != 0 else { return }
        total.wrappingSubtract(bytes, ordering: .relaxed)
    }

    /// Bytes counted now (tests, metrics).
    public var current: Int { total.load(ordering: .relaxed) }
}
