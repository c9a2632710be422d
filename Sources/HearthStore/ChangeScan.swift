import HearthJSON

/// A read of the change log for one location (`TreeView.changes(after:limit:touching:)`):
/// the records that touch it, with what a replay needs to tell whether the read saw every
/// change up to a snapshot (how many records were read, the last one's seq, the oldest seq
/// the log still holds).
public struct ChangeScan: Sendable, Hashable {
    /// The records that touch the location, oldest first.
    public var changes: [Change]
    /// Records read, touching the location or not.
    public var scanned: Int
    /// The seq of the last record read (nil when none was).
    public var lastSeq: Int64?
    /// The oldest seq the log holds (nil when it is empty).
    public var oldestSeq: Int64?

    public init(changes: [Change] = [], scanned: Int = 0, lastSeq: Int64? = nil, oldestSeq: Int64?) {
        self.changes = changes
        self.scanned = scanned
        self.lastSeq = lastSeq
        self.oldestSeq = oldestSeq
    }

    /// Whether a change at the path whose storage key (`DataPath.storageKey`, UTF-8) is
    /// `changed` touches the location with storage key `location`: one of them is the other
    /// or an ancestor of it (the root is an ancestor of every path). Compared as bytes,
    /// without splitting either into segments: keys never contain "/", so a key is an
    /// ancestor exactly when it is a prefix of the other followed by "/". It is what
    /// `location.isPrefix(of: path) || path.isAncestor(of: location)` says of the paths.
    public static func touches<Changed: Collection<UInt8>, Location: Collection<UInt8>>(
        _ changed: Changed, _ location: Location
    ) -> Bool {
        if changed.isEmpty || location.isEmpty { return true }
        var a = changed.makeIterator(), b = location.makeIterator()
        while true {
            switch (a.next(), b.next()) {
            case let (x?, y?):
                if x != y { return false }
            case (nil, nil):
                return true
            case (let rest?, nil), (nil, let rest?):
                return rest == UInt8(ascii: "/")
            }
        }
    }
}
