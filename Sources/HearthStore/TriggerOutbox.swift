/// One event a write causes, computed inside the write's own transaction (docs/design.md
/// §11). The engine stores it opaque: it knows no trigger format.
public struct OutboxEvent: Sendable, Hashable {
    /// The trigger's name.
    public var trigger: String
    /// Opaque bytes (the triggers module's JSON).
    public var payload: [UInt8]

    public init(trigger: String, payload: [UInt8]) {
        (self.trigger, self.payload) = (trigger, payload)
    }
}

/// An event as stored in an engine's outbox.
public struct OutboxRecord: Sendable, Hashable {
    /// Unique; increasing in commit order across the store (all nodes).
    public var id: Int64
    public var trigger: String
    /// The causing write's change seq; 0 for a schedule's due time (`recordDue`).
    public var seq: Int64
    /// The causing write's commit time, ms since the epoch; a schedule's due time.
    public var at: Int64
    public var payload: [UInt8]
    /// Failed delivery attempts so far.
    public var attempts: Int
    public var lastError: String?
    /// When the next attempt is due, ms since the epoch; 0: now.
    public var nextAttemptAt: Int64

    public init(id: Int64, trigger: String, seq: Int64, at: Int64, payload: [UInt8],
                attempts: Int = 0, lastError: String? = nil, nextAttemptAt: Int64 = 0) {
        (self.id, self.trigger, self.seq, self.at, self.payload) = (id, trigger, seq, at, payload)
        (self.attempts, self.lastError, self.nextAttemptAt) = (attempts, lastError, nextAttemptAt)
    }
}

/// A dead letter: an event whose delivery was given up (max age, or no retry).
public struct DeadLetter: Sendable, Hashable {
    public var record: OutboxRecord
    public var reason: String
    /// When it was given up, ms since the epoch.
    public var diedAt: Int64

    public init(record: OutboxRecord, reason: String, diedAt: Int64) {
        (self.record, self.reason, self.diedAt) = (record, reason, diedAt)
    }
}

/// What one trigger keeps in the outbox, in payload bytes: its pending events' and its
/// dead letters' (the byte budget counts both).
public struct OutboxBytes: Sendable, Hashable {
    public var pending: Int64
    public var dead: Int64
    public var total: Int64 { pending + dead }

    public init(pending: Int64 = 0, dead: Int64 = 0) {
        (self.pending, self.dead) = (pending, dead)
    }
}

/// What `TriggerOutbox.trim` removed to bring one trigger under its byte budget.
public struct OutboxTrim: Sendable, Hashable {
    /// Dead letters deleted (the oldest first).
    public var deadRemoved: Int
    /// Pending events deleted (the newest past the budget), undelivered.
    public var pendingDropped: Int

    public init(deadRemoved: Int = 0, pendingDropped: Int = 0) {
        (self.deadRemoved, self.pendingDropped) = (deadRemoved, pendingDropped)
    }
}

/// Computes a write's events on the writer's view BEFORE the write is applied (so `before`
/// values are readable), with the operation as applied (server values resolved). Runs
/// inside the write's transaction after its `WriteCheck`; throwing rejects that write alone
/// (like a check: `WriteFailure.rejected`). The returned events are inserted in the same
/// transaction as the write, with its seq and commit time.
public typealias WriteEffects = @Sendable (_ before: any TreeView, _ applied: WriteOperation) throws -> [OutboxEvent]

/// The stored events of every trigger (docs/design.md §11), per trigger in commit order (id
/// order). Mutations are serialized with the engine's writes.
public protocol TriggerOutbox: Sendable {
    /// The oldest pending events of `trigger` (id order) whose `nextAttemptAt <= now`, at
    /// most `limit`.
    func pending(trigger: String, now: Int64, limit: Int) throws -> [OutboxRecord]
    /// The pending events of `trigger` with an id above `after`, due or not, in id order,
    /// at most `limit`: one step of a deliverer's pass over its backlog (each read starts
    /// where the last one ended, so a pass reads every event once).
    func pending(trigger: String, after: Int64, limit: Int) throws -> [OutboxRecord]
    /// Delivered: removes them (unknown ids are ignored).
    func delivered(ids: [Int64]) throws
    /// A failed attempt: attempts += 1, `lastError`, `nextAttemptAt`.
    func failed(id: Int64, error: String, nextAttemptAt: Int64) throws
    /// An attempt that reached no function (the connection refused, or reset before any
    /// byte of an answer): `lastError` and `nextAttemptAt`, `attempts` unchanged (it counts
    /// the attempts a function answered or that timed out: what grows the backoff).
    func unreached(id: Int64, error: String, nextAttemptAt: Int64) throws
    /// Gives up: moves the event to the dead letters (one transaction).
    func kill(id: Int64, reason: String, at: Int64) throws
    /// An operator sets pending events aside: moves those of `ids` that are pending to the
    /// dead letters with `reason`, as they are (id, attempts, last error), in one
    /// transaction, and returns the ids moved, ascending (ids not pending move nothing).
    /// `resend` brings them back.
    func park(ids: [Int64], reason: String, at: Int64) throws -> [Int64]
    /// Per trigger with pending events (`trigger` nil: every one; else that one only): its
    /// oldest pending event (the lowest id), due or not.
    func oldestPending(trigger: String?) throws -> [String: OutboxRecord]
    /// Bounds a trigger's backlog: moves its pending events past the oldest `keep` (the
    /// newest ones) to the dead letters with `reason`, in one transaction, and returns how
    /// many moved (0 when it has at most `keep`). `keep` is at least 1.
    func killNewest(trigger: String, keep: Int, reason: String, at: Int64) throws -> Int
    /// Dead letters, oldest first (by id; `trigger` nil: all), at most `limit`.
    func deadLetters(trigger: String?, limit: Int) throws -> [DeadLetter]
    /// Moves dead letters back to pending (attempts 0, no last error, nextAttemptAt 0),
    /// keeping their ids and payloads. Returns how many moved.
    func resend(ids: [Int64]) throws -> Int
    /// Per trigger with pending events: their count and the commit time of the oldest.
    func backlog() throws -> [String: (pending: Int, oldestAt: Int64?)]
    /// The count of pending events of one trigger (for the outbox bound).
    func pendingCount(trigger: String) throws -> Int
    /// Per trigger with pending events or dead letters (`trigger` nil: all; else that one
    /// only): the payload bytes of each.
    func storedBytes(trigger: String?) throws -> [String: OutboxBytes]
    /// Bounds the payload bytes `trigger` keeps (pending and dead letters) to `maxBytes`, in
    /// one transaction: when its pending events alone exceed it, the newest of them past
    /// the budget (in id order, the running total of their payloads) are deleted and every
    /// dead letter of it goes; otherwise its oldest dead letters go until what is left fits.
    /// Other triggers' rows are untouched; nothing moves when it fits.
    func trim(trigger: String, maxBytes: Int64) throws -> OutboxTrim
    /// Deletes the dead letters (of every trigger) that died before `diedBefore` (ms since
    /// the epoch); returns how many, per trigger (only triggers with some deleted).
    func pruneDeadLetters(diedBefore: Int64) throws -> [String: Int]
    /// Records the due time `dueAt` (ms) of the schedule `trigger`, whose expression and
    /// time zone are `schedule`, at most once across processes and nodes, in one
    /// transaction against the schedule's mark (the latest due time recorded for it):
    /// - no mark yet, or one set for another `schedule`: only the mark is set to `dueAt`
    ///   (a new or changed schedule fires from its next due time; nothing is inserted);
    /// - a mark before `dueAt`: the mark moves to `dueAt` and one pending event (seq 0,
    ///   at `dueAt`, `payload`) is inserted;
    /// - a mark at or after `dueAt`: nothing (recorded already, here or on another node).
    /// Returns whether an event was inserted.
    func recordDue(trigger: String, schedule: String, dueAt: Int64, payload: [UInt8]) throws -> Bool
    /// Shared engines: takes or renews `trigger`'s delivery lease for this node for
    /// `seconds`; true when this node holds it. One-node engines: always true.
    func lease(trigger: String, seconds: Int) throws -> Bool
}

extension TreeStore {
    /// A write without effects (the form most callers use).
    public func write(
        _ operation: WriteOperation, check: WriteCheck?,
        completion: @escaping @Sendable (Result<WriteOutcome, WriteFailure>) -> Void
    ) {
        write(operation, check: check, effects: nil, completion: completion)
    }
}

extension StorageEngine {
    /// Writes with effects and waits for the commit (tools, tests). Not on the engine's queues.
    @discardableResult
    public func writeSync(_ operation: WriteOperation, check: WriteCheck?, effects: WriteEffects?) throws(WriteFailure) -> WriteOutcome {
        try PendingWrites.waitFor { write(operation, check: check, effects: effects, completion: $0) }
    }
}
