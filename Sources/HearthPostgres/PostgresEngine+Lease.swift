import Dispatch
import HearthStore
import Synchronization

/// What this node may do, and says of itself, by its database lease: the failure of work
/// that needs a lease it does not hold, the readiness probe, and the hooks tests use to
/// stand in for a killed or paused node.
extension PostgresEngine {
    /// How long a node's lease lasts without renewal, ms: its onDisconnect operations run
    /// on another node at most this long (plus `orphanCheckInterval`) after it died.
    public static let leaseMilliseconds: Int64 = 10_000
    /// How often a node renews its lease, seconds.
    public static let leaseRenewSeconds: Double = 2
    /// A node that could not renew its lease considers it lost this long before it runs
    /// out, and closes its connections' sessions then (`NodeLease`): other nodes take its
    /// onDisconnect operations only after that (leases are judged on the database's clock;
    /// this node's clock only measures the time since its last renewal).
    public static let leaseSafetyMarginMilliseconds: Int64 = 2_000
    /// How often a node checks whether its lease is still safely held, ms (well inside the
    /// margin, so the fence comes before another node's take-over).
    public static let leaseCheckMilliseconds: Int64 = 250

    /// The failure of what needs this node's lease while it holds none (503 at the HTTP
    /// boundary; nothing was done).
    static func noLease(operation: String) -> StoreError {
        .engine(EngineFailure(engine: "postgres", code: "lease", kind: .unavailable,
                              message: "this node holds no lease (it cannot reach the database); nothing was written", operation: operation))
    }

    /// How long `checkWritable` (`/readyz`) waits for its write probe before it answers
    /// that the node is not ready, ms: a health check gets its answer in time even while the
    /// writer waits on a silent database.
    public static let readinessWaitMilliseconds = 1_500

    /// A write transaction that opens and rolls back; not ready at once when closed (said
    /// as closed, though the lease that stopped being renewed at the close runs out since)
    /// or without a lease, and not ready when the probe takes longer than
    /// `readinessWaitMilliseconds`.
    public func checkWritable(completion: @escaping @Sendable (Result<Void, any Error>) -> Void) {
        if pending.isClosed { return completion(.failure(StoreError.closed)) }
        guard lease.isHeld else { return completion(.failure(Self.noLease(operation: "readiness"))) }
        let answer = FirstAnswer(completion)
        DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(Self.readinessWaitMilliseconds)) {
            answer.give(.failure(StoreError.engine(EngineFailure(
                engine: "postgres", code: "connection", kind: .unavailable,
                message: "cannot reach the database: no answer within \(Self.readinessWaitMilliseconds) ms", operation: "readiness"))))
        }
        probeWritable { answer.give($0) }
    }

    // MARK: Leases (tests stand in for a killed node)

    /// Stops renewing this node's lease, as a killed node would.
    func stopLeaseForTesting() { lease.stop() }
    /// Renews the lease now.
    func renewLeaseForTesting() throws { try lease.renew() }
    /// The fence check the lease timer runs (true when it fenced).
    func checkLeaseForTesting() -> Bool { lease.check() }
    /// Whether this node holds a lease under its current id.
    var holdsLease: Bool { lease.isHeld }
    /// "Now" for a lease statement (`NodeLease.now(_:)`).
    var leaseNow: PGValue { lease.nowParameter }
    /// Holds the change feed's delivery back, or lets it catch up.
    func pauseFeedForTesting(_ pause: Bool) { feed.setPausedForTesting(pause) }
}

/// Hands the first result given to `completion`, and drops the later ones (a probe and its
/// deadline race).
final class FirstAnswer: Sendable {
    private let completion: Mutex<(@Sendable (Result<Void, any Error>) -> Void)?>

    init(_ completion: @escaping @Sendable (Result<Void, any Error>) -> Void) {
        self.completion = Mutex(completion)
    }

    func give(_ result: Result<Void, any Error>) {
        let taken = completion.withLock { value -> (@Sendable (Result<Void, any Error>) -> Void)? in
            defer { value = nil }
            return value
        }
        taken?(result)
    }
}
