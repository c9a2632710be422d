/// Chooses which of one trigger's pending events to attempt next: in commit (id) order per
/// location, different locations at once up to `maxConcurrency`, and a location whose
/// event failed held back alone until that event's retry is due.
///
/// It owns no I/O: the deliverer reads the outbox in id order after `cursor` (a sweep)
/// and hands the records to `accept`, takes events to attempt from `next`, and reports
/// each outcome to `finished`. What it keeps is bounded: at most `capacity` events
/// (and `capacityBytes` of payload) are buffered; besides them it remembers, per sweep, the
/// held locations (each has at least one pending event in the outbox, so their count is
/// bounded by the trigger's pending events).
///
/// A sweep reads every pending event at most once: events of a held location are skipped
/// as they are read, so one poisoned location costs one pass, never a pass per other event.
/// The events it skipped are read again by the next sweep (`restart`), which the deliverer
/// starts when a held location's retry is due, and on its idle poll.
struct LocationScheduler<Item: Sendable>: Sendable {
    struct Entry: Sendable {
        var id: Int64
        var location: String
        /// When its next attempt is due (ms): the outbox record's `nextAttemptAt`.
        var dueAt: Int64
        var bytes: Int
        var item: Item
    }

    /// How an attempt ended.
    enum Outcome: Sendable, Equatable {
        /// Delivered or given up: the location's next event may go.
        case done
        /// Failed and retried at `at` (ms): the location waits until then.
        case retry(at: Int64)
    }

    let capacity: Int
    let capacityBytes: Int
    private(set) var maxConcurrency: Int
    /// The highest id read in this sweep.
    private(set) var cursor: Int64 = 0
    /// The sweep read the last pending event (a later read only finds newer commits).
    private(set) var reachedEnd = false
    /// When the current sweep started (ms).
    private(set) var sweepStartedAt: Int64 = 0
    /// Records the current sweep read (its cost).
    private(set) var sweepReads = 0
    /// Buffered events, not in flight, in id order.
    private(set) var queue: [Entry] = []
    private var queuedBytes = 0
    /// Buffered events per location (for the cost of `accept`: no search of the buffer).
    private var queuedPerLocation: [String: Int] = [:]
    /// Per location under way: the id of its event in flight.
    private(set) var inFlight: [String: Int64] = [:]
    /// Locations held back in this sweep, with when their head event is due.
    private(set) var held: [String: Int64] = [:]
    /// Ids buffered or in flight: a sweep that reads them again skips them.
    private var known: Set<Int64> = []
    /// After `maxConcurrency` changed: nothing new starts until what was under way is done
    /// (the locations of the two settings differ).
    private var draining = false

    init(maxConcurrency: Int, capacity: Int, capacityBytes: Int) {
        (self.maxConcurrency, self.capacity, self.capacityBytes) = (max(1, maxConcurrency), max(1, capacity), max(1, capacityBytes))
    }

    /// A new `maxConcurrency`: the buffer is dropped and a sweep starts over; nothing new
    /// starts until the attempts under way are done.
    mutating func configure(maxConcurrency: Int, now: Int64) {
        let value = max(1, maxConcurrency)
        guard value != self.maxConcurrency else { return }
        self.maxConcurrency = value
        draining = !inFlight.isEmpty
        dropQueue()
        restart(now: now)
    }

    /// Whether the buffer has room and the sweep has more to read.
    var wantsRead: Bool { !reachedEnd && queue.count < capacity && queuedBytes < capacityBytes }

    /// Newer events were committed: the next read looks after the cursor again.
    mutating func committed() { reachedEnd = false }

    /// Starts a new sweep from the oldest pending event: held locations are forgotten
    /// (their events are read again), the buffer and the attempts under way are kept.
    mutating func restart(now: Int64) {
        (cursor, reachedEnd, sweepStartedAt, sweepReads) = (0, false, now, 0)
        held = [:]
    }

    /// The earliest time a held location's event is due, nil when none is held.
    var earliestHeldDue: Int64? { held.values.min() }

    /// When the next sweep should start, nil before this one reached the end: when a held
    /// location's event is due, else after `idle` (events resent by another process); a
    /// sweep that read more than `cheapReads` records is not repeated within `minPass`, so
    /// held locations cost one read of the backlog per `minPass` at most.
    func nextSweep(idle: Int64, minPass: Int64, cheapReads: Int) -> Int64? {
        guard reachedEnd else { return nil }
        let due = min(earliestHeldDue ?? .max, sweepStartedAt + idle)
        return sweepReads <= cheapReads ? due : max(due, sweepStartedAt + minPass)
    }

    /// Takes the records of one read (`requested` asked for, in id order after `cursor`).
    /// Stops at the first that does not fit in the buffer (the cursor stays before it).
    mutating func accept(_ records: [(id: Int64, location: String, dueAt: Int64, bytes: Int, item: Item)], requested: Int, now: Int64) {
        sweepReads += records.count
        for record in records {
            if known.contains(record.id) || held[record.location] != nil {
                cursor = max(cursor, record.id)
                continue
            }
            let busy = inFlight[record.location] != nil || queuedPerLocation[record.location] != nil
            if !busy && record.dueAt > now {
                held[record.location] = record.dueAt
                cursor = max(cursor, record.id)
                continue
            }
            guard queue.isEmpty || (queue.count < capacity && queuedBytes + record.bytes <= capacityBytes) else { return }
            insert(Entry(id: record.id, location: record.location, dueAt: record.dueAt, bytes: record.bytes, item: record.item))
            cursor = max(cursor, record.id)
        }
        if records.count < requested { reachedEnd = true }
    }

    /// The next event to attempt, marked in flight; nil when every free location is held,
    /// busy or empty, or `maxConcurrency` attempts are under way. The oldest first.
    mutating func next(now: Int64) -> Entry? {
        guard !draining, inFlight.count < maxConcurrency else { return nil }
        var passed: Set<String> = []
        var index = 0
        while index < queue.count {
            let entry = queue[index]
            guard passed.insert(entry.location).inserted, inFlight[entry.location] == nil else {
                index += 1
                continue
            }
            if entry.dueAt > now {
                // The location's head is not due (it failed before): hold it back.
                hold(entry.location, until: entry.dueAt)
                continue  // `hold` removed the location's entries; `index` is the next one
            }
            queue.remove(at: index)
            unqueued(entry)
            inFlight[entry.location] = entry.id
            return entry
        }
        return nil
    }

    /// An attempt of `entry` ended.
    mutating func finished(_ entry: Entry, _ outcome: Outcome) {
        if inFlight[entry.location] == entry.id { inFlight[entry.location] = nil }
        known.remove(entry.id)
        if inFlight.isEmpty { draining = false }
        if case .retry(let at) = outcome { hold(entry.location, until: at) }
    }

    /// Forgets the buffer (the lease was lost; the events stay pending in the outbox).
    mutating func dropQueue() {
        for entry in queue { known.remove(entry.id) }
        (queue, queuedBytes, queuedPerLocation) = ([], 0, [:])
        reachedEnd = false
    }

    /// Holds `location` back until `at`: its buffered events are dropped (read again by the
    /// sweep after it is due), and later events of it are skipped in this sweep.
    private mutating func hold(_ location: String, until at: Int64) {
        held[location] = min(held[location] ?? at, at)
        let dropped = queue.filter { $0.location == location }
        guard !dropped.isEmpty else { return }
        queue.removeAll { $0.location == location }
        for entry in dropped {
            known.remove(entry.id)
            unqueued(entry)
        }
    }

    /// Inserts in id order (an event resent from the dead letters keeps its older id).
    private mutating func insert(_ entry: Entry) {
        var low = queue.count
        while low > 0 && queue[low - 1].id > entry.id { low -= 1 }
        queue.insert(entry, at: low)
        queuedBytes += entry.bytes
        queuedPerLocation[entry.location, default: 0] += 1
        known.insert(entry.id)
    }

    private mutating func unqueued(_ entry: Entry) {
        queuedBytes -= entry.bytes
        let left = (queuedPerLocation[entry.location] ?? 1) - 1
        queuedPerLocation[entry.location] = left > 0 ? left : nil
    }
}
