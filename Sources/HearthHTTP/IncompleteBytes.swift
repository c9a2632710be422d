import Synchronization

/// Bytes held for requests and messages that are not answered yet, all connections together
/// and per client address (`HTTPLimits.maxIncompleteBytes`,
/// `HTTPLimits.maxIncompleteBytesPerAddress`): a request head or body still arriving,
/// WebSocket frames and fragments of a message without its FIN, what an application
/// keeps for a message it is joining (the wire protocol's chunks, reported through
/// `WebSocketSession.holding`), a request's body while it is being handled, and whole
/// messages an application has not handled yet (`WebSocketSession.waiting`). The input
/// side's counterpart of `maxUnsentBytes`.
///
/// Each connection reports its own total when it changes (`account`) and learns whether
/// it may keep it; a connection at most `HTTPLimits.alwaysHeldBytes` is never refused, so
/// small requests and messages are taken whatever the others hold.
final class IncompleteBytes: Sendable {
    enum Verdict: Equatable {
        case keep
        /// The server-wide bound is passed: refuse with "try again later".
        case serverFull
        /// The address's share is passed: refuse this client.
        case addressFull
    }

    let limit: Int
    let perAddress: Int
    let total = Atomic<Int>(0)
    private let byAddress = Mutex<[String: Int]>([:])

    init(limit: Int, perAddress: Int) {
        self.limit = limit
        self.perAddress = perAddress
    }

    /// A connection of `address` that had `old` bytes counted now holds `new`. Always
    /// counts `new` (the caller releases it by accounting 0 when it drops the bytes).
    func account(_ address: String, from old: Int, to new: Int) -> Verdict {
        let delta = new - old
        if delta == 0 { return .keep }
        let all = total.wrappingAdd(delta, ordering: .relaxed).newValue
        let mine = byAddress.withLock { counts in
            let now = counts[address, default: 0] + delta
            counts[address] = now > 0 ? now : nil
            return now
        }
        guard delta > 0, new > HTTPLimits.alwaysHeldBytes else { return .keep }
        if mine > perAddress { return .addressFull }
        if all > limit { return .serverFull }
        return .keep
    }

    /// Bytes counted for `address` (tests, metrics).
    func held(by address: String) -> Int {
        byAddress.withLock { $0[address, default: 0] }
    }
}
