import HearthJSON

import Synchronization

/// The rendered bodies of recent plain reads (`GET <path>.json` with no query, `shallow`,
/// `format`, `print` or ETag), keyed by the path's storage key, so a repeated read of an
/// unchanged location is answered on the I/O thread from bytes already written: no queue
/// hop, no store read, no tree rebuilt (a user's 20 favourites are 140 leaf rows).
///
/// What makes it safe to serve:
/// - **Only data is cached, never a decision.** Every request is still judged by the rules;
///   a cached body is used only when the rules allowed the read without looking at data or
///   the clock (`AccessPolicy.readAllowedWithoutData`), otherwise the read runs on a reader
///   as before. A Firebase read grant covers the whole subtree, so one body serves every
///   caller allowed to read the path.
/// - **Writes invalidate before they are acknowledged.** The writer calls `invalidate`
///   after COMMIT and before any writer's completion (the engine's `EngineHooks.onCommit`),
///   for each changed path: its entry, every ancestor's and every descendant's go. A client
///   that got its write's answer never reads the old value from here.
/// - **A read that raced a write is not stored.** A reader takes a `Ticket` before its read
///   transaction starts; `insert` refuses the body if any invalidation since the ticket
///   overlaps the path (or if more than `invalidationHistory` happened since, so it cannot
///   tell). A snapshot older than a commit therefore never lands in the cache after that
///   commit's invalidation.
/// - Writes made by another process (`hearth import`, `restore`) need the server stopped
///   (they refuse a database in use), so every change passes through `invalidate`.
///
/// Bounded: at most `maxBytes` of bodies plus keys (`HEARTH_READ_CACHE_BYTES`; 0 turns it
/// off); an entry larger than `maxEntryBytes` is not kept. Eviction is CLOCK (second chance):
/// oldest first, skipping once an entry read since its last pass.
public final class ReadCache: Sendable {
    /// The default bound on cached bytes (bodies plus keys plus `entryOverhead` each).
    public static let defaultMaxBytes = 64 << 20
    /// A body larger than this is never cached (one big subtree must not flush the rest).
    static let maxEntryBytes = 1 << 20
    /// Bytes counted per entry beyond its body and key (dictionary slot, queue record).
    static let entryOverhead = 96
    /// Invalidations remembered for `insert`'s race check; a read that spans more writes
    /// than this is simply not cached.
    static let invalidationHistory = 4096

    /// Taken before a read transaction starts; `insert` needs it.
    public struct Ticket: Sendable {
        let generation: UInt64
    }

    public struct Stats: Sendable, Equatable {
        public var hits = 0
        public var misses = 0
        public var entries = 0
        public var bytes = 0

        public init(hits: Int = 0, misses: Int = 0, entries: Int = 0, bytes: Int = 0) {
            self.hits = hits
            self.misses = misses
            self.entries = entries
            self.bytes = bytes
        }
    }

    private struct Entry {
        var body: [UInt8]
        var serial: UInt64
        var referenced: Bool
        var cost: Int
    }

    private struct State {
        var entries: [JSONKey: Entry] = [:]
        /// How many entries lie strictly below each key (so a write above cached entries
        /// finds out whether it must look for them).
        var below: [JSONKey: Int] = [:]
        /// CLOCK queue: (key, serial) in insertion order from `head`; records whose entry is
        /// gone or was replaced are skipped.
        var queue: [(key: String, serial: UInt64)] = []
        var head = 0
        var bytes = 0
        var serial: UInt64 = 0
        var generation: UInt64 = 0
        /// The key invalidated at generation g is at `recent[g % invalidationHistory]`.
        var recent: [String] = []
        var hits = 0
        var misses = 0
    }

    public let maxBytes: Int
    private let state = Mutex(State())

    public init(maxBytes: Int = ReadCache.defaultMaxBytes) {
        self.maxBytes = max(0, maxBytes)
    }

    public var isEnabled: Bool { maxBytes > 0 }

    public var stats: Stats {
        state.withLock { Stats(hits: $0.hits, misses: $0.misses, entries: $0.entries.count, bytes: $0.bytes) }
    }

    /// Records in the eviction queue (tests: it must stay proportional to the entries).
    var queueLength: Int { state.withLock { $0.queue.count - $0.head } }

    /// The body cached for `key`, if any and if `usable()` (asked outside the lock, only
    /// when there is a body: the read endpoint's rules check) says it may be served.
    public func lookup(_ key: String, if usable: () -> Bool = { true }) -> [UInt8]? {
        guard isEnabled else { return nil }
        let found = state.withLock { state in
            let body = state.entries[key]?.body
            if body == nil { state.misses += 1 }
            return body
        }
        guard let body = found, usable() else { return nil }
        state.withLock { state in
            state.entries[key]?.referenced = true
            state.hits += 1
        }
        return body
    }

    /// Take before the read transaction that produces a body for `insert` begins.
    func ticket() -> Ticket {
        state.withLock { Ticket(generation: $0.generation) }
    }

    /// Keeps `body` for `key` unless a write overlapping `key` was invalidated since
    /// `ticket` (the body may predate it). Returns whether it was kept.
    @discardableResult
    public func insert(_ key: String, body: [UInt8], ticket: Ticket) -> Bool {
        let cost = body.count + key.utf8.count + Self.entryOverhead
        guard isEnabled, cost <= min(Self.maxEntryBytes, maxBytes) else { return false }
        return state.withLock { state in
            let since = state.generation &- ticket.generation
            if since > UInt64(Self.invalidationHistory) { return false }
            if since > 0 {
                var g = ticket.generation &+ 1
                while g <= state.generation {
                    if Self.overlaps(state.recent[Int(g % UInt64(Self.invalidationHistory))], key) { return false }
                    g &+= 1
                }
            }
            Self.remove(key, from: &state)
            state.serial &+= 1
            state.entries[key] = Entry(body: body, serial: state.serial, referenced: false, cost: cost)
            state.queue.append((key, state.serial))
            state.bytes += cost
            Self.forEachAncestor(of: key) { state.below[$0, default: 0] += 1 }
            evict(&state)
            return true
        }
    }

    /// Drops every entry a change at each of `keys` could affect: the key's own, its
    /// ancestors' and its descendants'. Call after the change is committed and before it is
    /// acknowledged.
    public func invalidate(_ keys: some Sequence<String>) {
        guard isEnabled else { return }
        state.withLock { state in
            for key in keys {
                if state.recent.isEmpty { state.recent = Array(repeating: "", count: Self.invalidationHistory) }
                state.generation &+= 1
                state.recent[Int(state.generation % UInt64(Self.invalidationHistory))] = key
                if state.entries.isEmpty { continue }  // nothing to drop: skip the ancestor walk
                Self.remove(key, from: &state)
                Self.forEachAncestor(of: key) { Self.remove($0, from: &state) }
                if state.below[key, default: 0] > 0 {
                    let doomed = state.entries.keys.map(\.string).filter { Self.isStrictlyBelow($0, key) }
                    for descendant in doomed { Self.remove(descendant, from: &state) }
                }
            }
        }
    }

    // MARK: Internals

    private func evict(_ state: inout State) {
        while state.bytes > maxBytes, state.head < state.queue.count {
            let record = state.queue[state.head]
            state.head += 1
            guard let entry = state.entries[record.key], entry.serial == record.serial else { continue }
            if entry.referenced {
                state.entries[record.key]!.referenced = false
                state.queue.append(record)
            } else {
                Self.remove(record.key, from: &state)
            }
        }
        // Drop the consumed prefix and stale records so the queue stays proportional to
        // the entries, whatever the mix of inserts and invalidations.
        let live = state.queue.count - state.head
        if state.head > 1024 && state.head * 2 > state.queue.count || live > 2 * state.entries.count + 64 {
            let entries = state.entries
            state.queue = state.queue[state.head...].filter { entries[$0.key]?.serial == $0.serial }
            state.head = 0
        }
    }

    private static func remove(_ key: String, from state: inout State) {
        guard let entry = state.entries.removeValue(forKey: JSONKey(key)) else { return }
        state.bytes -= entry.cost
        forEachAncestor(of: key) { ancestor in
            let left = state.below[ancestor, default: 0] - 1
            state.below[ancestor] = left > 0 ? left : nil
        }
    }

    /// The proper ancestors of a storage key, nearest first, ending with the root ("").
    static func forEachAncestor(of key: String, _ body: (String) -> Void) {
        guard !key.isEmpty else { return }
        let bytes = key.utf8
        var end = bytes.endIndex
        while let slash = bytes[..<end].lastIndex(of: UInt8(ascii: "/")) {
            body(String(key[..<slash]))
            end = slash
        }
        body("")
    }

    /// Whether `key` is a proper descendant of `ancestor`.
    static func isStrictlyBelow(_ key: String, _ ancestor: String) -> Bool {
        if ancestor.isEmpty { return !key.isEmpty }
        let k = key.utf8, a = ancestor.utf8
        guard k.count > a.count, k.starts(with: a) else { return false }
        return k[k.index(k.startIndex, offsetBy: a.count)] == UInt8(ascii: "/")
    }

    /// Whether a change at one key can affect the value at the other: equal, or one below
    /// the other.
    static func overlaps(_ a: String, _ b: String) -> Bool {
        a.sameCodeUnits(as: b) || isStrictlyBelow(a, b) || isStrictlyBelow(b, a)
    }
}

extension Database {
    /// The same core over the same store and policy, with `readCache` (nil: none).
    public func with(readCache: ReadCache?) -> Database {
        Database(store: store, policy: policy, readCache: readCache, effects: effects, profiler: profiler)
    }

    /// The same core with other write effects (the triggers' events).
    public func with(effects: EffectsProvider?) -> Database {
        Database(store: store, policy: policy, readCache: readCache, effects: effects, profiler: profiler)
    }
}
