import HearthJSON
import HearthStore

extension TriggerLimits {
    /// A deliverer's longest sleep with nothing to do: also how soon it sees events resent
    /// by another process (`hearth triggers resend`) or committed by another node.
    public static let idlePollMilliseconds: Int64 = 2000
    /// Dead letters counted per trigger for an overview (past it: "at least").
    public static let maxDeadLettersCounted = 10_000
    /// Dead letters moved back per round of `resendAll`.
    public static let resendBatchSize = 500
    /// The dead-letter reason of an event an operator parked (`TriggerOutbox.park`).
    public static let parkedReason = "parked by an operator"
}

/// What operators see of the triggers (`hearth triggers`, the console's
/// Triggers screen), from the declared set and the engine's outbox: no secrets (a
/// trigger's header values and HMAC secret are never part of it; the URL is shown without
/// its query).
public struct TriggerOverview: Sendable, Equatable {
    public var name: String
    /// nil for a trigger no longer declared that still has pending events or dead letters.
    public var event: String?
    public var ref: String?
    public var url: String?
    public var retry: Bool?
    public var pending: Int
    public var oldestPendingAt: Int64?
    /// Dead letters, counted up to `TriggerLimits.maxDeadLettersCounted`.
    public var dead: Int
    /// Payload bytes kept for it: its pending events' and its dead letters'.
    public var storedBytes: Int64 = 0
    /// Its byte budget (nil for a trigger no longer declared: none applies).
    public var maxStoredBytes: Int64?
    /// The last failed attempt: this process's (when it delivers), else the oldest pending
    /// event's (what any process delivering it last saw).
    public var lastError: String?
    /// The oldest pending event (the next in line; a failing one holds the others back):
    /// its id (for `park`), payload (not shown: it holds the data; `OutboxRecord.ref`
    /// names its location), counted attempts and last error.
    public var oldestPending: OutboxRecord?

    /// One row per declared trigger, then one per other name with pending events or dead
    /// letters, sorted by name within each group. `statuses`: the running deliverers' (may be empty).
    /// `deadCountLimit` is a parameter so tests can cross it.
    /// `defaultBudget`: the byte budget of a declared trigger that sets none.
    public static func all(declared: [TriggerDefinition], outbox: any TriggerOutbox, statuses: [TriggerStatus] = [],
                           defaultBudget: Int64 = TriggerLimits.defaultMaxStoredBytes,
                           deadCountLimit: Int = TriggerLimits.maxDeadLettersCounted) throws -> [TriggerOverview] {
        let backlog = try outbox.backlog()
        let oldest = try outbox.oldestPending(trigger: nil)
        let stored = try outbox.storedBytes(trigger: nil)
        var dead: [String: Int] = [:]
        for letter in try outbox.deadLetters(trigger: nil, limit: deadCountLimit) {
            dead[letter.record.trigger, default: 0] += 1
        }
        let lastErrors = Dictionary(statuses.compactMap { status in status.lastError.map { (status.name, $0) } }, uniquingKeysWith: { a, _ in a })
        func row(_ name: String, _ definition: TriggerDefinition?) throws -> TriggerOverview {
            let waiting = backlog[name]
            let lastError = lastErrors[name] ?? oldest[name]?.lastError
            return TriggerOverview(name: name, event: definition?.shownEvent, ref: definition?.shownRef,
                                   url: definition?.url.redacted, retry: definition?.retry, pending: waiting?.pending ?? 0,
                                   oldestPendingAt: waiting?.oldestAt, dead: dead[name] ?? 0,
                                   storedBytes: stored[name]?.total ?? 0,
                                   maxStoredBytes: definition.map { $0.maxStoredBytes ?? defaultBudget }, lastError: lastError,
                                   oldestPending: oldest[name])
        }
        let names = Set(declared.map(\.name))
        let others = Set(backlog.keys).union(oldest.keys).union(dead.keys).union(stored.keys).subtracting(names).sorted()
        return try declared.sorted { $0.name < $1.name }.map { try row($0.name, $0) } + others.map { try row($0, nil) }
    }

    /// The row as JSON (the console's API).
    public var json: JSONValue {
        var members: [JSONKey: JSONValue] = ["name": .string(name), "pending": .int(Int64(pending)), "dead": .int(Int64(dead)),
                                             "declared": .bool(event != nil), "storedBytes": .int(storedBytes)]
        if let maxStoredBytes { members["maxStoredBytes"] = .int(maxStoredBytes) }
        if let event { members["event"] = .string(event) }
        if let ref { members["ref"] = .string(ref) }
        if let url { members["url"] = .string(url) }
        if let retry { members["retry"] = .bool(retry) }
        if let oldestPendingAt { members["oldestPendingAt"] = .int(oldestPendingAt) }
        if let lastError { members["lastError"] = .string(lastError) }
        if let oldestPending { members["oldest"] = oldestPending.json }
        return .object(members)
    }

    /// Moves every dead letter (of `trigger`, or all) back to pending, `batchSize` at a
    /// time; returns how many.
    public static func resendAll(trigger: String?, outbox: any TriggerOutbox,
                                 batchSize: Int = TriggerLimits.resendBatchSize) throws -> Int {
        var moved = 0
        while true {
            let letters = try outbox.deadLetters(trigger: trigger, limit: batchSize)
            guard !letters.isEmpty else { return moved }
            let count = try outbox.resend(ids: letters.map(\.record.id))
            guard count > 0 else { return moved }
            moved += count
        }
    }
}

extension OutboxRecord {
    /// The location the event is about (`ref` of the stored payload), if it can be read.
    public var ref: String? {
        guard case .object(let members)? = try? JSONParser.parse(payload), case .string(let ref)? = members["ref"] else { return nil }
        return "/" + ref
    }

    /// As JSON (the console's API): no payload (it holds the data).
    public var json: JSONValue {
        var members: [JSONKey: JSONValue] = [
            "id": .int(id), "trigger": .string(trigger), "attempts": .int(Int64(attempts)), "at": .int(at),
            "nextAttemptAt": .int(nextAttemptAt),
        ]
        if let ref { members["ref"] = .string(ref) }
        if let lastError { members["lastError"] = .string(lastError) }
        return .object(members)
    }
}

extension DeadLetter {
    /// The location the event is about (`ref` of the stored payload), if it can be read.
    public var ref: String? { record.ref }

    /// As JSON (the console's API): no payload (it holds the data).
    public var json: JSONValue {
        var members: [JSONKey: JSONValue] = [
            "id": .int(record.id), "trigger": .string(record.trigger), "reason": .string(reason),
            "attempts": .int(Int64(record.attempts)), "diedAt": .int(diedAt), "at": .int(record.at),
        ]
        if let ref { members["ref"] = .string(ref) }
        if let lastError = record.lastError { members["lastError"] = .string(lastError) }
        return .object(members)
    }
}
