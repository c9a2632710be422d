import HearthJSON
import HearthStore

/// The writes a client asks for, built the same way for every transport: REST
/// PUT/POST/DELETE and wire `p` are sets, REST PATCH and wire `m`/`om` are updates, and a
/// conditional set (REST `if-match`, wire `p` with `h`) carries its `Precondition`. The
/// adapters only parse their message into a path, a body and an expected tag, and encode
/// the answer (`DatabaseError.stale` carries the current value and its tag).
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

extension WriteRequest {
    /// A compare-and-set condition: the write happens only if `tag(current value at the
    /// write's path)` equals `expected`; else it fails with `DatabaseError.stale(current:tag:)`.
    /// Checked by `Database.write` on the writer's view, inside the write's transaction,
    /// and only for a caller who may read the path. Only for `.set` operations.
    public struct Precondition: Sendable {
        public var expected: String
        public var tag: @Sendable (JSONValue) -> String
        /// Tag the value with its priorities (`format=export` form: the SDKs' node hash
        /// covers them) rather than without (REST ETags do not).
        var withPriorities: Bool

        public init(expected: String, withPriorities: Bool = false, tag: @escaping @Sendable (JSONValue) -> String) {
            self.expected = expected
            self.withPriorities = withPriorities
            self.tag = tag
        }

        /// REST's `if-match` (docs/protocol/rest.md §1.4): `etag` names the stored value
        /// without its priorities, as `etagOf` encodes it.
        public static func ifMatch(_ etag: String, etagOf: @escaping @Sendable (JSONValue) -> String) -> Precondition {
            Precondition(expected: etag, withPriorities: false, tag: etagOf)
        }

        /// The wire protocol's `p` with `h` (a transaction, docs/protocol/wire.md §4.3):
        /// `hash` names the value with its priorities, as the SDKs hash a node
        /// (`nodeHash`).
        public static func ifHash(_ hash: String, nodeHash: @escaping @Sendable (JSONValue) -> String) -> Precondition {
            Precondition(expected: hash, withPriorities: true, tag: nodeHash)
        }
    }
}
