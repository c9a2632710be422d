import HearthAuth
import HearthJSON
import HearthRules
import HearthStore
import HearthStreams

/// An open listen; `cancel()` stops it (idempotent).
public struct Listening: Sendable {
    public let subscription: Subscription
    let hub: StreamHub

    public func cancel() { hub.remove(subscription) }
}

/// A listen whose access was decided and whose first events were read, not yet delivering:
/// the transport attaches its sink with `start` once it is ready (SSE: after the response
/// head is out), or gives up with `cancel`.
public struct PendingListen: Sendable {
    public let subscription: Subscription
    let hub: StreamHub
    /// The snapshot as `put /`, or the events a resuming client missed, each with its seq
    /// (a transport whose sink exists only later encodes them ahead: SSE).
    public let initial: [(event: StreamEvent, seq: Int64)]
    let seq: Int64
    let resultTag: [UInt8]?
    let resultKeys: Set<Int>?

    /// Starts delivery: `initial`, then every newer change. The sink prepares `initial`
    /// on the caller's queue (`StreamEventSink.prepareEvents`).
    @discardableResult
    public func start(_ sink: any StreamEventSink) -> Listening {
        hub.start(subscription, events: sink, initial: initial, through: seq, resultTag: resultTag, resultKeys: resultKeys)
        return Listening(subscription: subscription, hub: hub)
    }

    /// Starts delivery with the first events already encoded: `initial.send` hands them
    /// to the transport, then every newer change follows.
    @discardableResult
    public func start(_ sink: any StreamEventSink, initial prepared: PreparedEvents) -> Listening {
        hub.start(subscription, events: sink, initial: prepared, through: seq, resultTag: resultTag, resultKeys: resultKeys)
        return Listening(subscription: subscription, hub: hub)
    }

    public func cancel() { hub.remove(subscription) }

    /// The listen without its first events, for a transport that encoded them already and
    /// keeps the listen as long as its stream is open (SSE: to start it, and to cancel it on
    /// close). Held instead of `self`, it lets the snapshot go once it is encoded; `self`
    /// would keep the location's whole value, parsed (several times the size of its JSON),
    /// for as long as the stream stays open.
    public var withoutInitial: PendingListen {
        PendingListen(subscription: subscription, hub: hub, initial: [], seq: seq, resultTag: resultTag, resultKeys: resultKeys)
    }
}

extension Database {
    /// Listens to `location` (or to `query`'s window of its children) for `caller`, with
    /// typed events to `sink`: `openListen` and `start` at once (the wire protocol).
    public func listen(
        _ location: DataPath, query: DatabaseQuery?, as caller: Caller, gate: any StreamGate, address: String,
        hub: StreamHub, sink: any StreamEventSink,
        completion: @escaping @Sendable (Result<Listening, DatabaseError>) -> Void
    ) {
        openListen(location, query: query, as: caller, gate: gate, address: address, hub: hub) { result in
            completion(result.map { $0.start(sink) })
        }
    }

    /// Opens a listen on `location` (or on `query`'s window of its children) for `caller`.
    ///
    /// The order guarantees "no change lost, none duplicated" (docs/design.md §5): the
    /// listen registers with the hub first, then one read transaction decides access and
    /// reads the current value (or the query's result, or, for a location listen resuming
    /// after change `resumeAfter`, the changes it missed while the log holds at most
    /// `maxReplay` of them) with the seq it is in sync with; once started, the hub delivers
    /// only newer changes. A query listen with a limit gets its whole new window as `put /`
    /// whenever it changes; one without gets the new state of the children a change
    /// touched (`QueryChildrenRefresh`). Access that depends on data is re-decided after
    /// every batch by whoever publishes (`gate` is what that re-check and the expiry sweep
    /// look at).
    public func openListen(
        _ location: DataPath, query: DatabaseQuery?, as caller: Caller, gate: any StreamGate, address: String,
        hub: StreamHub, resumeAfter: Int64? = nil, maxReplay: Int = 0, maxReplayBytes: Int = .max,
        completion: @escaping @Sendable (Result<PendingListen, DatabaseError>) -> Void
    ) {
        let store = self.store
        var refresh: QueryRefresh? = nil
        var rereadChildren: QueryChildrenRefresh? = nil
        // A query without a limit: each child is in the window or not by itself, so its
        // results carry their keys for the hub to follow the window child by child.
        let trackKeys: Int? = query.flatMap { $0.tree.limit == nil ? hub.options.maxTrackedWindowKeys : nil }
        if let tree = query?.tree {
            refresh = { (done: @escaping @Sendable (QueryResult?) -> Void) in
                store.read({ view in try Database.queryResult(tree, at: location, view: view, trackingKeys: trackKeys) },
                           completion: { (result: Result<QueryResult, any Error>) in done(try? result.get()) })
            }
            if tree.limit == nil {
                rereadChildren = { probes, done in
                    store.read({ view in try Database.queryChildren(tree, probes, at: location, view: view) },
                               completion: { (result: Result<QueryChildrenResult, any Error>) in done(try? result.get()) })
                }
            }
        }
        let subscription: Subscription
        do {
            subscription = try hub.register(location: location, gate: gate, address: address, refresh: refresh,
                                            rereadChildren: rereadChildren)
        } catch {
            return completion(.failure(error == .tooManyStreams ? .tooManyListens : .tooManyListensFromAddress))
        }
        let policy = self.policy
        typealias Opened = (initial: [(event: StreamEvent, seq: Int64)], seq: Int64, dependsOnData: Bool, tag: [UInt8]?,
                            keys: Set<Int>?)
        store.read({ view -> Opened? in
            var dependsOnData = false
            if !caller.isAdmin {
                let access = policy.readAccess(location, query: query?.rules, caller: caller, view: view)
                guard access.allowed else { return nil }
                dependsOnData = access.dependsOnDataOrTime
            }
            if let query {
                // A query listen always starts from the query's result (no replay).
                let result = try Self.queryResult(query.tree, at: location, view: view, trackingKeys: trackKeys)
                return ([(StreamEvent(name: .put, path: "/", data: result.value), result.seq)], result.seq, dependsOnData,
                        result.tag, result.childKeyHashes)
            }
            let seq = try view.lastChangeSeq()
            if let resumeAfter, let replay = try Self.replay(at: location, after: resumeAfter, through: seq, limit: maxReplay,
                                                             maxBytes: maxReplayBytes, view: view) {
                return (replay, seq, dependsOnData, nil, nil)
            }
            let value = FirebaseTree.render(try view.value(at: location))
            return ([(StreamEvent(name: .put, path: "/", data: value), seq)], seq, dependsOnData, nil, nil)
        }, completion: { result in
            switch result {
            case .success(nil):
                hub.remove(subscription)
                completion(.failure(.permissionDenied(nil)))
            case .failure(let error):
                hub.remove(subscription)
                completion(.failure(DatabaseError.from(error)))
            case .success(let opened?):
                hub.setDependsOnData(subscription, opened.dependsOnData)
                completion(.success(PendingListen(subscription: subscription, hub: hub, initial: opened.initial,
                                                  seq: opened.seq, resultTag: opened.tag, resultKeys: opened.keys)))
            }
        })
    }

    /// The events a client that saw everything up to `after` missed, when the log still
    /// holds all of them and they are at most `limit` with at most `maxBytes` of stored data
    /// at the location; nil when a fresh snapshot is needed instead (log trimmed, too many,
    /// too large, or an id from the future, e.g. after a restore).
    static func replay(at path: DataPath, after: Int64, through seq: Int64, limit: Int, maxBytes: Int,
                       view: any TreeView) throws -> [(event: StreamEvent, seq: Int64)]? {
        guard after >= 0, after <= seq else { return nil }
        if after == seq { return [] }
        // Every record up to `seq` read (none trimmed, at most `limit` of them); only those
        // that touch `path` are decoded.
        let scan = try view.changes(after: after, limit: limit + 1, touching: path, maxBytes: maxBytes)
        guard !scan.tooLarge, let oldest = scan.oldestSeq, oldest <= after + 1, scan.scanned <= limit, scan.lastSeq == seq else { return nil }
        return scan.changes.compactMap { change in
            StreamEvent.of(StreamChange(change), at: path).map { ($0, change.seq) }
        }
    }

    /// A query's result on `view` in client form, with a digest to tell whether it changed
    /// and the seq it is in sync with.
    /// With `trackingKeys`, also the hashes of its child keys when they are at most that
    /// many (`QueryResult.childKeyHashes`).
    static func queryResult(_ query: TreeQuery, at path: DataPath, view: any TreeView, trackingKeys: Int? = nil) throws -> QueryResult {
        let stored = try view.query(query, at: path)
        var keys: Set<Int>? = nil
        if let trackingKeys {
            if case .object(let children) = stored {
                if children.count <= trackingKeys { keys = Set(children.keys.lazy.map(\.hashValue)) }
            } else {
                keys = []
            }
        }
        return QueryResult(value: FirebaseTree.render(stored), tag: SHA256.hash(JSONWriter.write(stored)), seq: try view.lastChangeSeq(),
                           childKeyHashes: keys)
    }

    /// The state of some children in the window of `query` (which has no limit) on `view`:
    /// each child's value when the query selects it, `null` when it does not but the client
    /// may have it; one child as `put /<key>`, several as `patch /`.
    static func queryChildren(_ query: TreeQuery, _ probes: [QueryChildProbe], at path: DataPath,
                              view: any TreeView) throws -> QueryChildrenResult {
        var changed: [JSONKey: JSONValue] = [:]
        var inWindow: [Bool] = []
        inWindow.reserveCapacity(probes.count)
        for probe in probes {
            let child = DataPath(uncheckedSegments: path.segments + [probe.key.string])
            let stored = query.orderBy == .priority ? try view.exportValue(at: child) : try view.value(at: child)
            // The query over a node holding just this child: the child or nothing.
            if stored != .null, case .object(let selected) = query.apply(to: .object([probe.key: stored])),
               let value = selected[probe.key] {
                changed[probe.key] = FirebaseTree.render(value)
                inWindow.append(true)
            } else {
                if probe.mayBeInWindow { changed[probe.key] = .null }
                inWindow.append(false)
            }
        }
        let seq = try view.lastChangeSeq()
        let event: StreamEvent? = if changed.count == 1, let (key, value) = changed.first {
            StreamEvent(name: .put, path: "/" + key.string, data: value)
        } else if changed.isEmpty {
            nil
        } else {
            StreamEvent(name: .patch, path: "/", data: .object(changed))
        }
        return QueryChildrenResult(event: event, inWindow: inWindow, seq: seq)
    }
}

extension StreamChange {
    /// A committed change as the hub carries it.
    public init(_ change: Change) {
        self.init(seq: change.seq, path: change.path, kind: change.kind == .put ? .put : .patch,
                  data: change.data, unchangedBelow: change.unchangedBelow)
    }
}
