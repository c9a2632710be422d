import HearthJSON

/// One committed write as a stream sees it (docs/design.md §5): what the store's change log
/// holds, plus what the writer learned about subscribed locations below the write.
public struct StreamChange: Sendable {
    public enum Kind: Sendable {
        /// `data` is the new value at `path` (`.null` deletes). Stored form: no arrays.
        case put
        /// `data` is an object of slash-joined paths relative to `path` to their new values.
        case patch
    }

    /// The change-log sequence number: the stream event id.
    public var seq: Int64
    public var path: DataPath
    public var kind: Kind
    public var data: JSONValue
    /// Subscribed locations strictly below `path` whose value this write left as it was:
    /// they get no event (docs/protocol/streaming.md §2, "a `put /` for writes above it
    /// that change it"). Empty when nothing was compared (then every touched location gets
    /// its event).
    public var unchangedBelow: [DataPath]

    public init(seq: Int64, path: DataPath, kind: Kind, data: JSONValue, unchangedBelow: [DataPath] = []) {
        self.seq = seq
        self.path = path
        self.kind = kind
        self.data = data
        self.unchangedBelow = unchangedBelow
    }
}
