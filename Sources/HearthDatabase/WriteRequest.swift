import HearthJSON
import HearthStore

/// The writes a client asks for, built the same way for every transport (issue 26): REST
/// PUT/POST/DELETE and wire `p` are sets, REST PATCH and wire `m`/`om` are updates. The
/// adapters only parse their message into a path and a body and encode the answer.
public enum WriteRequest {
    /// A set of `value` at `path`, normalized as stored (nulls and empty objects dropped;
    /// a nil value deletes).
    public static func set(_ value: JSONValue, at path: DataPath) throws(TreeError) -> WriteOperation {
        .set(WriteEntry(path: path, value: try FirebaseTree.normalize(value, at: path)))
    }

    /// A delete of the value at `path` (a set of null).
    public static func delete(at path: DataPath) -> WriteOperation {
        .set(WriteEntry(path: path, value: nil))
    }

    /// An update of the children of `base` that `body` names (keys may be slash paths),
    /// applied atomically; nil when `body` is `{}`, which changes nothing (no write, so no
    /// empty change is logged).
    public static func update(_ body: JSONValue, at base: DataPath) throws(UpdateError) -> WriteOperation? {
        let updates = try MultiPathUpdate.parse(base: base, body: body)
        if updates.isEmpty { return nil }
        return .update(base: base, entries: updates.map { WriteEntry(path: $0.path, value: $0.value) })
    }
}
