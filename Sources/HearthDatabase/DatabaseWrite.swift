import HearthJSON
import HearthStore

/// A write as the core's callers see it: what a transport asked for, built by
/// `DatabaseWrite.set`/`delete`/`update` (over `WriteRequest`), and what `Database.write`
/// hands back as applied (server values resolved). Adapters read it through the answers
/// they give (`echo(at:)`, `updatedChildren`, `base`) and never see the store's write types.
public struct DatabaseWrite: Sendable, Hashable {
    /// The store's form of this write; only the core hands it to the store.
    let operation: WriteOperation

    init(_ operation: WriteOperation) {
        self.operation = operation
    }

    /// A set of `value` at `path`, normalized as stored (`WriteRequest.set`).
    public static func set(_ value: JSONValue, at path: DataPath) throws(TreeError) -> DatabaseWrite {
        DatabaseWrite(try WriteRequest.set(value, at: path))
    }

    /// A delete of the value at `path` (`WriteRequest.delete`).
    public static func delete(at path: DataPath) -> DatabaseWrite {
        DatabaseWrite(WriteRequest.delete(at: path))
    }

    /// An update of the children of `base` that `body` names; nil when `body` is `{}`,
    /// which changes nothing (`WriteRequest.update`).
    public static func update(_ body: JSONValue, at base: DataPath) throws(UpdateError) -> DatabaseWrite? {
        try WriteRequest.update(body, at: base).map(DatabaseWrite.init)
    }

    /// Whether any value holds a server value (`{".sv": …}`) still to be resolved.
    public var hasServerValues: Bool { operation.hasServerValues }

    /// The location the write is made at: a set's path, an update's base.
    public var base: DataPath {
        switch operation {
        case .set(let entry): return entry.path
        case .update(let base, _): return base
        }
    }

    /// The value this write leaves at `path` when it is a replacement at exactly `path`
    /// (a set, a delete: null); else null.
    public func replacedValue(at path: DataPath) -> JSONValue {
        if case .set(let entry) = operation, entry.path == path { return entry.value ?? .null }
        return .null
    }

    /// An update's children by their path relative to its base (slash-joined), as written;
    /// null for a set.
    public var updatedChildren: JSONValue {
        guard case .update(let updateBase, let entries) = operation else { return .null }
        var members: [JSONKey: JSONValue] = [:]
        for entry in entries {
            members[entry.path.segments.dropFirst(updateBase.count).joined(separator: "/")] = entry.value ?? .null
        }
        return .object(members)
    }
}

extension Database {
    /// `write` of a transport's write: `completion` gets the write as applied (server
    /// values resolved).
    public func write(
        _ write: DatabaseWrite, as caller: Caller, precondition: Precondition? = nil, fence: WriteFence? = nil,
        completion: @escaping @Sendable (Result<DatabaseWrite, DatabaseError>) -> Void
    ) {
        self.write(write.operation, as: caller, precondition: precondition, fence: fence) { result in
            completion(result.map { DatabaseWrite($0.applied) })
        }
    }

    /// `checkWrite` of a transport's write.
    public func checkWrite(
        _ write: DatabaseWrite, as caller: Caller, now: Int64,
        completion: @escaping @Sendable (Result<Void, DatabaseError>) -> Void
    ) {
        checkWrite(write.operation, as: caller, now: now, completion: completion)
    }
}
