import Dispatch
import HearthJSON
import HearthStore
import HearthStreams
import Synchronization

/// The listen half of the database core: what happens to open listens when data,
/// rules or credentials change, for every transport. It owns the store's commit hook (the
/// read cache is invalidated, the hub gets the changes, listens whose access depends on
/// data are re-decided), the review of every listen when the rules change, and the
/// periodic revocation sweep. It knows no tokens: whether a user's credential still holds
/// is a closure its owner passes in (`startSweeps`).
public final class ListenAccess: Sendable {
    public let hub: StreamHub
    private let policy: any AccessPolicy
    private let readCache: ReadCache?
    private let sweep = Mutex<DispatchSourceTimer?>(nil)

    /// Subscribed locations below a write that the writer compares before and after it, at
    /// most; past it every one of them gets its event.
    public static let maxWatchedLocationsPerWrite = 64

    public init(hub: StreamHub, policy: any AccessPolicy, readCache: ReadCache?) {
        self.hub = hub
        self.policy = policy
        self.readCache = readCache
    }

    /// The store's `EngineHooks.watch`: the listened locations below `path` a writer must
    /// compare.
    public func watchedLocations(below path: DataPath) -> [DataPath]? {
        hub.watchedLocations(below: path, limit: Self.maxWatchedLocationsPerWrite)
    }

    /// The store's `EngineHooks.onCommit`: runs before any writer of the batch is
    /// acknowledged (ReadCache relies on it), on the writer's view after the commit.
    public func committed(_ changes: [Change], view: any TreeView) {
        readCache?.invalidate(changes.lazy.map(\.path.storageKey))
        let policy = self.policy
        hub.publish(changes.map(StreamChange.init)) { subscription in
            Self.mayStillRead(subscription, policy: policy, view: view)
        }
    }

    /// Re-decides every open listen's read access under the current rules and data (after
    /// the rules changed); those that lost it get `cancel` (docs/protocol/streaming.md §2).
    public func reviewAccess(in store: any TreeStore) {
        let (hub, policy) = (self.hub, self.policy)
        store.read({ view in
            hub.review { subscription in
                Self.mayStillRead(subscription, policy: policy, view: view) ? .keep : .cancel
            }
        }, completion: { _ in })
    }

    /// Ends every listen's credential check once: those whose user's tokens issued at their
    /// credential's time are no longer valid (`isStillValid(uid, issuedAt)`: revoked,
    /// disabled, deleted) get `auth_revoked`.
    func endRevoked(isStillValid: (_ uid: String, _ issuedAt: Int64) -> Bool) {
        hub.review { subscription in
            guard let gate = subscription.gate as? SubscriberGate, let uid = gate.uid, let issuedAt = gate.issuedAt else { return .keep }
            return isStillValid(uid, issuedAt) ? .keep : .authRevoked
        }
    }

    /// Starts the hub's keep-alive and expiry timers, and the revocation sweep every
    /// `seconds` on `queue` (`endRevoked`).
    public func startSweeps(
        revocationCheckEvery seconds: Double, on queue: DispatchQueue,
        isStillValid: @escaping @Sendable (_ uid: String, _ issuedAt: Int64) -> Bool
    ) {
        hub.startTimers()
        sweep.withLock { current in
            current?.cancel()
            // Made inside the lock: a timer is not Sendable, so it never leaves it.
            current = StreamHub.timer(every: seconds, on: queue, leewayDivisor: 10) { [weak self] in
                self?.endRevoked(isStillValid: isStillValid)
            }
        }
    }

    /// A sweep left running by an owner that never called `stop` ends with the core.
    deinit {
        sweep.withLock { $0?.cancel() }
    }

    /// Stops the sweeps and the hub (at shutdown).
    public func stop() {
        sweep.withLock { $0?.cancel(); $0 = nil }
        hub.stop()
    }

    /// The access re-check of a listen whose read decision depends on data.
    static func mayStillRead(_ subscription: Subscription, policy: any AccessPolicy, view: any TreeView) -> Bool {
        guard let gate = subscription.gate as? SubscriberGate else { return false }
        if gate.caller.isAdmin { return true }
        return policy.canRead(subscription.location, query: gate.query, caller: gate.caller, view: view)
    }
}
