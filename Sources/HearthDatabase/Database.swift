import HearthJSON
import HearthRules
import HearthStore

/// The database's operations, for any transport: reads and writes for a
/// `Caller`, behind the rules gate, with server values, compare-and-set and the read
/// cache. It returns values and `DatabaseError`s; REST + SSE and the wire protocol are
/// adapters over it, each turning its own requests into these calls and the results
/// into its own answers.
///
/// Every decision is made where the data is read (docs/design.md §3): a read's rules check
/// and the read share one snapshot on a reader; a write's check and the write run on the
/// writer's view inside its transaction.
public final class Database: Sendable {
    public let store: any TreeStore
    public let policy: any AccessPolicy
    /// Rendered bodies of plain reads; whoever sets it must also invalidate it on every
    /// commit before any writer is acknowledged (`HearthService` does, in `onCommit`).
    public let readCache: ReadCache?
    /// The effects of a write by a caller (the trigger events it causes, recorded
    /// in its own transaction), asked for every write, admins' included; nil: none.
    public let effects: EffectsProvider?

    /// What a write by a caller causes beside itself, computed in its transaction.
    public typealias EffectsProvider = @Sendable (Caller) -> WriteEffects?
    /// What this database does during a chosen window (docs/profiling.md); off, each
    /// transport's hook costs one atomic load.
    public let profiler: Profiler

    public init(store: any TreeStore, policy: any AccessPolicy, readCache: ReadCache? = nil,
                effects: EffectsProvider? = nil, profiler: Profiler = Profiler()) {
        self.store = store
        self.policy = policy
        self.profiler = profiler
        self.readCache = readCache.flatMap { $0.isEnabled ? $0 : nil }
        self.effects = effects
    }

    // MARK: Reads

    /// Decides `caller`'s read of `path` (with `query`'s rule variables) and, when allowed,
    /// runs `body` on the same snapshot, on a reader. Admins skip the rules.
    public func read<T: Sendable>(
        _ path: DataPath, query: RuleQuery? = nil, as caller: Caller,
        _ body: @escaping @Sendable (any TreeView) throws -> T,
        completion: @escaping @Sendable (Result<T, DatabaseError>) -> Void
    ) {
        let policy = self.policy
        store.read({ view -> T in
            guard caller.isAdmin || policy.canRead(path, query: query, caller: caller, view: view) else {
                throw DatabaseError.permissionDenied(nil)
            }
            return try body(view)
        }, completion: { result in
            completion(result.mapError(DatabaseError.from))
        })
    }

    /// The compact rendering of the whole value at `path` (Firebase key order, arrays),
    /// for `caller`. Answered from the read cache on the calling thread when the body is
    /// there and the rules granted the read without looking at data (ReadCache explains
    /// why that is safe); otherwise read on a reader and offered to the cache.
    public func readRendered(
        _ path: DataPath, as caller: Caller, completion: @escaping @Sendable (Result<[UInt8], DatabaseError>) -> Void
    ) {
        let key = path.storageKey
        var ticket: ReadCache.Ticket? = nil
        if let cache = readCache {
            // The rules are asked only when there is a body to serve (a miss reads on a
            // reader, which decides there).
            if let body = cache.lookup(key, if: { caller.isAdmin || policy.readAllowedWithoutData(path, caller: caller) }) {
                return completion(.success(body))
            }
            ticket = cache.ticket()
        }
        let (cache, taken) = (readCache, ticket)
        read(path, as: caller, { view in
            let body = try view.renderedValue(at: path)
            if let taken { cache?.insert(key, body: body, ticket: taken) }
            return body
        }, completion: completion)
    }

    // MARK: Writes

    /// Whether `caller` may make `operation` now, decided on a reader's snapshot with
    /// server values resolved at this moment, without writing (the wire protocol's
    /// onDisconnect operations are checked when registered).
    public func checkWrite(
        _ operation: WriteOperation, as caller: Caller, now: Int64,
        completion: @escaping @Sendable (Result<Void, DatabaseError>) -> Void
    ) {
        if caller.isAdmin { return completion(.success(())) }
        let policy = self.policy
        store.read({ view in
            let resolved = operation.hasServerValues ? try operation.resolvingServerValues(in: view, now: now) : operation
            let access = policy.writeAccess(resolved, caller: caller, view: view)
            guard access.allowed else { throw DatabaseError.permissionDenied(access.denial) }
        }, completion: { result in completion(result.mapError(DatabaseError.from)) })
    }

    /// A compare-and-set condition of a write (`WriteRequest.Precondition`).
    public typealias Precondition = WriteRequest.Precondition

    /// Queues `operation` for the single writer on behalf of `caller`: the rules (unless
    /// admin) and `precondition` are checked on the writer's view inside the transaction,
    /// server values are resolved there, and `completion` runs after the commit (or the
    /// refusal), on the writer: keep it short. The write's effects (`effects`) run after the
    /// check, in the same transaction; one that throws refuses the write.
    ///
    /// A write the rules allow whatever the data and the time (`writeAccessWithoutData`) is
    /// allowed here, on the caller's thread, and the writer does not ask the rules again
    /// (the rules were ~10 % of the single writer's time per create). A rules
    /// file swapped in between applies from the next write, as if this one had committed
    /// first. Anything else, a denial included, is decided on the writer as before, so a
    /// refused write is still answered in its turn.
    ///
    /// A write with a `fence` commits only while the fence holds in its transaction
    /// (`WriteFence`: this node's lease on a shared engine); otherwise it is refused with
    /// `.unavailable` and nothing is written.
    public func write(
        _ operation: WriteOperation, as caller: Caller, precondition: Precondition? = nil, fence: WriteFence? = nil,
        completion: @escaping @Sendable (Result<WriteOutcome, DatabaseError>) -> Void
    ) {
        let decided = !caller.isAdmin && !operation.hasServerValues
            && policy.writeAccessWithoutData(operation, caller: caller)?.allowed == true
        store.write(operation, check: Self.fenced(check(for: caller, precondition: precondition, rulesDecided: decided), by: fence),
                    effects: effects?(caller)) { result in
            completion(result.mapError(DatabaseError.from))
        }
    }

    /// `check` behind `fence`: the fence is asked first, so a write refused by it changes
    /// nothing (and a fenced onDisconnect record is consumed only by a write it allows).
    static func fenced(_ check: WriteCheck?, by fence: WriteFence?) -> WriteCheck? {
        guard let fence else { return check }
        return { view, operation in
            guard try view.holds(fence) else { throw DatabaseError.unavailable(cause: "this node does not hold its lease on the shared store") }
            try check?(view, operation)
        }
    }

    /// The writer-side gate of a write by `caller` (docs/design.md §3). Admins without a
    /// precondition need none, nor do writes whose rules were decided already
    /// (`rulesDecided`) without one.
    func check(for caller: Caller, precondition: Precondition?, rulesDecided: Bool = false) -> WriteCheck? {
        let askRules = !caller.isAdmin && !rulesDecided
        if !askRules && precondition == nil { return nil }
        let policy = self.policy
        return { view, operation in
            if askRules {
                let access = policy.writeAccess(operation, caller: caller, view: view)
                guard access.allowed else { throw DatabaseError.permissionDenied(access.denial) }
            }
            if let precondition, case .set(let entry) = operation {
                // A compare-and-set tells whether the value matched: on a location the
                // caller may not read it is refused before comparing, or the
                // answer would be an oracle on the data (a right guess commits, a wrong one
                // is stale; an empty tag tells whether anything is there).
                guard caller.isAdmin || policy.canRead(entry.path, query: nil, caller: caller, view: view) else {
                    throw DatabaseError.permissionDenied(nil)
                }
                let current = try view.value(at: entry.path)
                let tag = precondition.tag(precondition.withPriorities ? try view.exportValue(at: entry.path) : current)
                if tag != precondition.expected {
                    throw DatabaseError.stale(current: current, tag: tag)
                }
            }
        }
    }
}
