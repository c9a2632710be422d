import Synchronization

/// Open connections per client address (`HTTPLimits.maxConnectionsPerAddress`), shared by
/// the accept queue and the I/O queues. A direct peer is counted at accept; a connection
/// from a trusted proxy is counted under the forwarded client of its current request.
final class AddressCounts: Sendable {
    let limit: Int
    private let counts = Mutex<[String: Int]>([:])

    init(limit: Int) {
        self.limit = limit
    }

    /// Counts one more connection for `address`; false (and nothing counted) at the limit.
    func acquire(_ address: String) -> Bool {
        counts.withLock { counts in
            let current = counts[address, default: 0]
            guard current < limit else { return false }
            counts[address] = current + 1
            return true
        }
    }

    func release(_ address: String) {
        counts.withLock { counts in
            let left = counts[address, default: 1] - 1
            counts[address] = left > 0 ? left : nil
        }
    }

    /// Connections counted for `address` (tests, metrics).
    func count(_ address: String) -> Int {
        counts.withLock { $0[address, default: 0] }
    }
}
