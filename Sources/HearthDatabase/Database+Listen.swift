import HearthAuth
import HearthJSON
import HearthRules
import HearthStore
import HearthStreams

/// A listen's query: what the store selects and what the rules see as `query.*`.
public struct ListenQuery: Sendable, Hashable {
    public var tree: TreeQuery
    public var rules: RuleQuery

    public init(tree: TreeQuery, rules: RuleQuery) {
        self.tree = tree
        self.rules = rules
    }
}

/// An open listen; `cancel()` stops it (idempotent).
public struct Listening: Sendable {
    public let subscription: Subscription
    let hub: StreamHub

    public func cancel() { hub.remove(subscription) }
}

extension Database {
    /// Listens to `location` (or to `query`'s window of its children) for `caller`, with
    /// typed events to `sink` (for transports that encode events themselves).
    ///
    /// The order guarantees "no change lost, none duplicated" (DESIGN.md §5): the listen
    /// registers with the hub first, then one read transaction decides access and reads
    /// the current value (or the query's result) with the seq it is in sync with; the hub
    /// then hands `sink` that value as `put /`, then only newer changes. A query listen
    /// gets its whole new window as `put /` whenever it changes. Access that depends on
    /// data is re-decided after every batch by whoever publishes (`gate` is what that
    /// re-check and the expiry sweep look at).
    public func listen(
        _ location: DataPath, query: ListenQuery?, as caller: Caller, gate: any StreamGate, address: String,
        hub: StreamHub, sink: any StreamEventSink,
        completion: @escaping @Sendable (Result<Listening, DatabaseError>) -> Void
    ) {
        let store = self.store
        var refresh: QueryRefresh? = nil
        if let tree = query?.tree {
            refresh = { (done: @escaping @Sendable (QueryResult?) -> Void) in
                store.read({ view in try Database.queryResult(tree, at: location, view: view) },
                           completion: { (result: Result<QueryResult, any Error>) in done(try? result.get()) })
            }
        }
        let subscription: Subscription
        do {
            subscription = try hub.register(location: location, gate: gate, address: address, refresh: refresh)
        } catch {
            return completion(.failure(.tooManyListens))
        }
        let policy = self.policy
        store.read({ view -> (initial: StreamEvent, seq: Int64, dependsOnData: Bool, tag: [UInt8]?)? in
            var dependsOnData = false
            if !caller.isAdmin {
                let access = policy.readAccess(location, query: query?.rules, caller: caller, view: view)
                guard access.allowed else { return nil }
                dependsOnData = access.dependsOnDataOrTime
            }
            if let query {
                let result = try Self.queryResult(query.tree, at: location, view: view)
                return (StreamEvent(name: .put, path: "/", data: result.value), result.seq, dependsOnData, result.tag)
            }
            let value = FirebaseTree.render(try view.value(at: location))
            return (StreamEvent(name: .put, path: "/", data: value), try view.lastChangeSeq(), dependsOnData, nil)
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
                hub.start(subscription, events: sink, initial: opened.initial, through: opened.seq, resultTag: opened.tag)
                completion(.success(Listening(subscription: subscription, hub: hub)))
            }
        })
    }

    /// A query's result on `view` in client form, with a digest to tell whether it changed
    /// and the seq it is in sync with.
    static func queryResult(_ query: TreeQuery, at path: DataPath, view: any TreeView) throws -> QueryResult {
        let stored = try view.query(query, at: path)
        return QueryResult(value: FirebaseTree.render(stored), tag: SHA256.hash(JSONWriter.write(stored)), seq: try view.lastChangeSeq())
    }
}
