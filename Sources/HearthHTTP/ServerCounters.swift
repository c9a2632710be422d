import Synchronization

/// The server's counters, shared by the accept queue and the I/O queues. Atomics, so
/// reading `stats` never waits on an I/O queue.
final class ServerCounters: Sendable {
    let open = Atomic<Int>(0)
    let accepted = Atomic<Int>(0)
    let rejected = Atomic<Int>(0)
    let requests = Atomic<Int>(0)
    let malformed = Atomic<Int>(0)
    let openStreams = Atomic<Int>(0)
    let streamOverflows = Atomic<Int>(0)
    /// Connections upgraded to WebSocket sessions and still open.
    let openWebSockets = Atomic<Int>(0)
    /// Response bytes queued in connections' buffers and not yet written (all connections),
    /// with what the application holds for clients in the same ledger.
    let unsent: UnsentBytes
    /// Responses replaced by 503 because `maxUnsentBytes` was reached, and streams ended
    /// for the same reason.
    let unsentRefusals = Atomic<Int>(0)
    /// Connections refused with 429 because their address had `maxConnectionsPerAddress`.
    let addressRefusals = Atomic<Int>(0)
    /// Requests and sessions refused for holding too many incomplete bytes, or a message
    /// incomplete for too long (`HTTPServerStats.incompleteRefusals`).
    let incompleteRefusals = Atomic<Int>(0)
    /// Times a WebSocket stopped reading because its application was behind
    /// (`HTTPServerStats.readPauses`).
    let readPauses = Atomic<Int>(0)
    /// Send syscalls that carried open-stream output (`HTTPServerStats.streamWrites`).
    let streamWrites = Atomic<Int>(0)
    /// Of those, sends through an io_uring ring (`HTTPServerStats.ringSends`).
    let ringSends = Atomic<Int>(0)
    /// Request ids made so far (the counter part of `<prefix>-<n>`).
    let requestIDs = Atomic<Int>(0)
    /// `HTTPConnection` objects alive: lets tests prove connections are freed after close
    /// (no retain cycle left between a connection, its sources and its handlers).
    let liveConnectionObjects = Atomic<Int>(0)

    init(unsent: UnsentBytes) {
        self.unsent = unsent
    }

    func snapshot(incompleteBytes: Int) -> HTTPServerStats {
        HTTPServerStats(
            openConnections: open.load(ordering: .relaxed),
            acceptedConnections: accepted.load(ordering: .relaxed),
            rejectedConnections: rejected.load(ordering: .relaxed),
            totalRequests: requests.load(ordering: .relaxed),
            malformedRequests: malformed.load(ordering: .relaxed),
            openStreams: openStreams.load(ordering: .relaxed),
            streamOverflows: streamOverflows.load(ordering: .relaxed),
            openWebSockets: openWebSockets.load(ordering: .relaxed),
            unsentBytes: unsent.current,
            unsentRefusals: unsentRefusals.load(ordering: .relaxed) + unsent.refusals.load(ordering: .relaxed),
            addressRefusals: addressRefusals.load(ordering: .relaxed),
            incompleteBytes: incompleteBytes,
            incompleteRefusals: incompleteRefusals.load(ordering: .relaxed),
            readPauses: readPauses.load(ordering: .relaxed),
            streamWrites: streamWrites.load(ordering: .relaxed),
            ringSends: ringSends.load(ordering: .relaxed))
    }
}
