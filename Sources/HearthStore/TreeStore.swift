import HearthJSON

/// Read access to one consistent state of the tree (a snapshot). Implemented by the store
/// on a reader connection inside a read transaction, and on the writer connection inside
/// the write transaction. Everything above HearthStore reads through this protocol, so a
/// second storage engine can stand behind it (docs/design.md §9).
public protocol TreeView {
    /// The value at `path` (`.null` when nothing is there), as stored: objects, never arrays.
    func value(at path: DataPath) throws(StoreError) -> JSONValue
    /// The keys of the children at `path` (empty for a leaf or a missing node), unordered.
    func childKeys(at path: DataPath) throws(StoreError) -> [String]
    /// The leaf at `path`, or nil when it is missing or an object.
    func leaf(at path: DataPath) throws(StoreError) -> JSONValue?
    /// True when anything is stored at or below `path`.
    func exists(at path: DataPath) throws(StoreError) -> Bool
    /// The seq of the last change committed in this state (0 before the first write), so
    /// a snapshot read here is exactly "in sync with change N" (stream start,
    /// docs/design.md §5).
    func lastChangeSeq() throws(StoreError) -> Int64
    /// Change-log records newer than `seq` in this state, oldest first, at most `limit`,
    /// and the oldest seq the log still holds (nil when it is empty): a resuming stream
    /// can tell whether it missed anything the log no longer has.
    func changes(after seq: Int64, limit: Int) throws(StoreError) -> (changes: [Change], oldestSeq: Int64?)
    /// `changes(after:limit:)` for one location (a resuming stream's replay): of the at most
    /// `limit` records read, only those that touch `location` (`ChangeScan.touches`) are
    /// decoded and returned; the scan says how many were read and the last one's seq. Once
    /// the touching records' stored data (its JSON text, in bytes) would pass `maxBytes`,
    /// the scan stops there with `tooLarge` and decodes nothing more.
    func changes(after seq: Int64, limit: Int, touching location: DataPath, maxBytes: Int) throws(StoreError) -> ChangeScan
    /// The children of `path` that `query` selects (docs/protocol/rest.md §1.3), as an
    /// object, or null.
    func query(_ query: TreeQuery, at path: DataPath) throws(StoreError) -> JSONValue
    /// The value at `path` with its priorities (docs/protocol/rest.md §1.5
    /// `format=export`): objects carry a `.priority` member, leaves with one become
    /// `{".value": v, ".priority": p}`.
    func exportValue(at path: DataPath) throws(StoreError) -> JSONValue
    /// The compact JSON text of the value at `path` as readers see it
    /// (docs/protocol/rest.md §1.8 arrays, Firebase key order):
    /// `JSONWriter.write(FirebaseTree.render(value(at: path)))`.
    func renderedValue(at path: DataPath) throws(StoreError) -> [UInt8]
    /// The leaf at `path`, or the leaves below it, in the byte order of their full storage
    /// paths, after the path `after` (nil: from the first), at most `limit`: a subtree of
    /// any size paged through in bounded memory, within this view's one snapshot
    /// (`TreeExport.run(engine:)`, `StoreTransfer`).
    func leafRows(at path: DataPath, after: String?, limit: Int) throws(StoreError) -> [(path: String, value: JSONValue)]
    /// The priority of the node at `path`, nil when it has none.
    func priority(at path: DataPath) throws(StoreError) -> JSONValue?
    /// Inside the writer's transaction: whether `fence` holds (a shared engine checks its
    /// lease rows and consumes the fence's onDisconnect record, `WriteFence`).
    func holds(_ fence: WriteFence) throws(StoreError) -> Bool
}

extension TreeView {
    /// Reads and decodes every record, then keeps those that touch `location`, measuring
    /// each one's data as its JSON text: an engine whose log decodes cheaply by path first
    /// overrides it.
    public func changes(after seq: Int64, limit: Int, touching location: DataPath, maxBytes: Int) throws(StoreError) -> ChangeScan {
        let (all, oldest) = try changes(after: seq, limit: limit)
        var scan = ChangeScan(oldestSeq: oldest)
        var bytes = 0
        for change in all {
            if location.isPrefix(of: change.path) || change.path.isAncestor(of: location) {
                bytes += JSONWriter.write(change.data).count
                if bytes > maxBytes {
                    scan.tooLarge = true
                    return scan
                }
                scan.changes.append(change)
            }
            scan.scanned += 1
            scan.lastSeq = change.seq
        }
        return scan
    }

    /// The scan with no bound on its bytes (an index build's catch-up, which reads the
    /// changes a slice at a time).
    public func changes(after seq: Int64, limit: Int, touching location: DataPath) throws(StoreError) -> ChangeScan {
        try changes(after: seq, limit: limit, touching: location, maxBytes: .max)
    }

    public func renderedValue(at path: DataPath) throws(StoreError) -> [UInt8] {
        JSONWriter.write(FirebaseTree.render(try value(at: path)))
    }

    /// Whether a write that depends on `fence` may commit in this (the writer's)
    /// transaction. With one node there is no lease to lose: always.
    public func holds(_ fence: WriteFence) throws(StoreError) -> Bool { true }
}

/// One replacement in a write: `value` nil deletes. Values are already normalised
/// (`FirebaseTree.normalize`): no arrays, no nulls, no empty objects.
public struct WriteEntry: Sendable, Hashable {
    public var path: DataPath
    public var value: JSONValue?

    public init(path: DataPath, value: JSONValue?) {
        self.path = path
        self.value = value
    }
}

/// A write as a client asked for it: one PUT-like replacement, or an update of several
/// paths under `base` applied atomically (docs/protocol/rest.md §1.2 multi-path PATCH).
public enum WriteOperation: Sendable, Hashable {
    case set(WriteEntry)
    case update(base: DataPath, entries: [WriteEntry])

    /// The replacements, in order: a view, not an array (a set's one entry in an array was an
    /// allocation each time a create's path asked for them, four times per create).
    public var entries: WriteEntries { WriteEntries(self) }
}

/// A write's entries as a collection that does not copy them: the one of a set, or an
/// update's array.
public struct WriteEntries: RandomAccessCollection, Sendable {
    private let operation: WriteOperation

    init(_ operation: WriteOperation) { self.operation = operation }

    public var startIndex: Int { 0 }
    public var endIndex: Int {
        switch operation {
        case .set: return 1
        case .update(_, let entries): return entries.count
        }
    }

    public subscript(position: Int) -> WriteEntry {
        switch operation {
        case .set(let entry):
            precondition(position == 0, "index out of range")
            return entry
        case .update(_, let entries): return entries[position]
        }
    }
}

/// What kind of event a change becomes on a stream (docs/protocol/streaming.md §2).
public enum ChangeKind: String, Sendable {
    case put
    case patch
}

/// One committed write, as recorded in the change log. `data` for a put is the new value
/// at `path` (`.null` for a delete); for a patch it is an object of child paths relative
/// to `path` (slash-joined) to their new values.
public struct Change: Sendable, Hashable {
    public var seq: Int64
    public var path: DataPath
    public var kind: ChangeKind
    public var data: JSONValue
    public var at: Int64
    /// Watched locations strictly below `path` whose value this write left unchanged (see
    /// `EngineHooks.watch`). Known only live; not part of the log.
    public var unchangedBelow: [DataPath]

    public init(seq: Int64, path: DataPath, kind: ChangeKind, data: JSONValue, at: Int64, unchangedBelow: [DataPath] = []) {
        self.seq = seq
        self.path = path
        self.kind = kind
        self.data = data
        self.at = at
        self.unchangedBelow = unchangedBelow
    }

    /// Where the write lands: its path for a put, its base for a multi-path update.
    public var base: DataPath { path }
}

/// The result of a committed write.
public struct WriteOutcome: Sendable, Hashable {
    /// The change-log sequence number of this write (the stream event id).
    public var seq: Int64
    /// The commit time used for this write, ms since the epoch.
    public var at: Int64
    /// The operation as applied: server values resolved (docs/protocol/rest.md §1.5).
    public var applied: WriteOperation

    public init(seq: Int64, at: Int64, applied: WriteOperation) {
        (self.seq, self.at, self.applied) = (seq, at, applied)
    }
}

extension WriteOperation {
    /// True when every entry deletes (and there is at least one): the writes that still
    /// commit on a full disk (`DiskSpace`).
    public var onlyDeletes: Bool {
        let entries = self.entries
        return !entries.isEmpty && entries.allSatisfy { $0.value == nil }
    }

    /// True when an entry holds a server-value placeholder.
    public var hasServerValues: Bool {
        entries.contains { $0.value.map(ServerValues.contains) ?? false }
    }

    /// The operation with server values resolved against `view` (the state before it) at
    /// commit time `now` (docs/protocol/rest.md §1.5). A resolved value never vanishes:
    /// placeholders become leaves. Throws the `StoreError` of a failed read, or the
    /// `TreeError` of a value the tree cannot hold (an increment past the largest double).
    public func resolvingServerValues(in view: any TreeView, now: Int64) throws -> WriteOperation {
        func resolve(_ entry: WriteEntry) throws -> WriteEntry {
            guard let value = entry.value, ServerValues.contains(value) else { return entry }
            do {
                let resolved = try ServerValues.resolve(value, at: entry.path, now: now) { path in
                    try view.leaf(at: path)
                }
                return WriteEntry(path: entry.path, value: resolved)
            } catch let error as StoreError {
                throw error
            } catch let error as TreeError {
                throw error
            } catch {
                throw StoreError.corrupt("server value: \(error)")
            }
        }
        switch self {
        case .set(let entry):
            return .set(try resolve(entry))
        case .update(let base, let entries):
            var resolved: [WriteEntry] = []
            for entry in entries { resolved.append(try resolve(entry)) }
            return .update(base: base, entries: resolved)
        }
    }
}

/// Why a write did not happen.
public enum WriteFailure: Error, Sendable {
    /// The write's check (rules, preconditions) threw; nothing was written.
    case rejected(any Error & Sendable)
    /// The store failed; nothing of this write was committed (the failure came before its
    /// transaction's COMMIT was sent, or the engine found out afterwards that it did not
    /// commit). Trying the write again applies it once.
    case store(StoreError)
    /// The connection to the store was lost after the write's COMMIT was sent, and the
    /// engine could not find out whether it committed: it may have been written. Trying it
    /// again may apply it twice (a push, an increment).
    case outcomeUnknown(StoreError)
    /// The write touches more nodes than `StoreOptions.maxNodesPerWrite`; nothing was written.
    case tooLarge(WriteTooLarge)
}

/// Checks a write inside the writer's transaction, on the writer's current view of the
/// data (docs/design.md §3), before anything is applied. Throwing rejects this write alone.
public typealias WriteCheck = @Sendable (any TreeView, WriteOperation) throws -> Void

/// The store as the rest of Hearth sees it.
public protocol TreeStore: Sendable {
    /// Runs `body` on a reader, inside one read transaction, and hands back its result.
    func read<T: Sendable>(
        _ body: @escaping @Sendable (any TreeView) throws -> T,
        completion: @escaping @Sendable (Result<T, any Error>) -> Void
    )
    /// Queues `operation` for the single writer. `check` runs first, in the transaction,
    /// then `effects` (on the state before the write); the events it returns are committed
    /// with the write, in its transaction (`TriggerOutbox`). `completion` runs after the
    /// batch holding this write committed (or failed).
    func write(
        _ operation: WriteOperation, check: WriteCheck?, effects: WriteEffects?,
        completion: @escaping @Sendable (Result<WriteOutcome, WriteFailure>) -> Void
    )
    /// Whether the store takes writes now (`/readyz`).
    func checkWritable(completion: @escaping @Sendable (Result<Void, any Error>) -> Void)
}

extension TreeStore {
    /// By default, `probeWritable`.
    public func checkWritable(completion: @escaping @Sendable (Result<Void, any Error>) -> Void) {
        probeWritable(completion: completion)
    }

    /// Runs a no-op write transaction on the writer, proving the store takes writes.
    public func probeWritable(completion: @escaping @Sendable (Result<Void, any Error>) -> Void) {
        write(.update(base: .root, entries: []), check: { _, _ in throw WritableProbe() }) { result in
            switch result {
            case .failure(.rejected(let error)) where error is WritableProbe: completion(.success(()))
            case .failure(let failure): completion(.failure(failure))
            case .success: completion(.success(()))
            }
        }
    }
}

/// Thrown by `checkWritable`'s check so its transaction is rolled back untouched.
struct WritableProbe: Error {}

extension Change {
    /// The change-log record of `operation`: a put of the new value, or a patch of the
    /// entries' paths relative to the base.
    package static func record(of operation: WriteOperation, seq: Int64, at time: Int64) -> Change {
        let change: Change
        switch operation {
        case .set(let entry):
            change = Change(seq: 0, path: entry.path, kind: .put, data: entry.value ?? .null, at: time)
        case .update(let base, let entries):
            var data: [JSONKey: JSONValue] = [:]
            for entry in entries {
                let relative = entry.path.segments.dropFirst(base.segments.count).joined(separator: "/")
                data[relative] = entry.value ?? .null
            }
            change = Change(seq: 0, path: base, kind: .patch, data: .object(data), at: time)
        }
        var numbered = change
        numbered.seq = seq
        return numbered
    }
}
