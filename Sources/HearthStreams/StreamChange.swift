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
    public var kind: Kind { didSet { reindex() } }
    public var data: JSONValue { didSet { reindex() } }
    /// Subscribed locations strictly below `path` whose value this write left as it was:
    /// they get no event (docs/protocol/streaming.md §2, "a `put /` for writes above it
    /// that change it"). Empty when nothing was compared (then every touched location gets
    /// its event).
    public var unchangedBelow: [DataPath] { didSet { reindex() } }
    /// A large change's lookups, made once for all the locations it reaches (nil for a
    /// small one, which is scanned); made again when the fields it reads change.
    private(set) var index: StreamChangeIndex?

    public init(seq: Int64, path: DataPath, kind: Kind, data: JSONValue, unchangedBelow: [DataPath] = []) {
        self.seq = seq
        self.path = path
        self.kind = kind
        self.data = data
        self.unchangedBelow = unchangedBelow
        index = StreamChangeIndex(kind: kind, data: data, unchangedBelow: unchangedBelow)
    }

    private mutating func reindex() {
        index = StreamChangeIndex(kind: kind, data: data, unchangedBelow: unchangedBelow)
    }
}

/// What `StreamEvent.of` looks up in a large change, for each subscribed location below it.
/// A change reaches every such location (the fan-out computes one event per location), so
/// scanning the change's entries for each would cost entries × locations on the
/// namespace's fan-out (a 20,000-entry update under 1,000 listened children, one address's
/// streams: 2·10⁷ path splits, every push waiting). The unchanged locations are at most
/// the writer's bound (64); past `indexedPast` they are kept in a set too. Built once, in
/// time linear in the change, when it has more than `indexedPast` entries or unchanged
/// locations.
final class StreamChangeIndex: Sendable {
    /// Up to this many entries, or unchanged locations, are scanned.
    static let indexedPast = 16
    /// The unchanged locations (`unchangedBelow`), if there are more than `indexedPast`.
    let unchanged: Set<DataPath>?
    /// A multi-path update's entries: their paths relative to the change's path, their
    /// values, and the index of those paths (empty for a put).
    let paths: [DataPath]
    let values: [JSONValue]
    let entries: PathIndex

    init?(kind: StreamChange.Kind, data: JSONValue, unchangedBelow: [DataPath]) {
        var members: [JSONKey: JSONValue] = [:]
        if kind == .patch, case .object(let patch) = data, patch.count > Self.indexedPast { members = patch }
        guard !members.isEmpty || unchangedBelow.count > Self.indexedPast else { return nil }
        unchanged = unchangedBelow.count > Self.indexedPast ? Set(unchangedBelow) : nil
        paths = members.keys.map { DataPath(uncheckedSegments: StreamEvent.segments(of: $0)) }
        values = Array(members.values)
        entries = PathIndex(paths)
    }
}
