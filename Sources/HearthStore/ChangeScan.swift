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
    /// The records that touch the location hold more stored data than the scan's `maxBytes`:
    /// it stopped at the first record past that, without decoding it (`changes`, `scanned`
    /// and `lastSeq` then cover only what came before). A replay sends a snapshot instead.
    public var tooLarge: Bool

    public init(changes: [Change] = [], scanned: Int = 0, lastSeq: Int64? = nil, oldestSeq: Int64?, tooLarge: Bool = false) {
        self.changes = changes
        self.scanned = scanned
        self.lastSeq = lastSeq
        self.oldestSeq = oldestSeq
        self.tooLarge = tooLarge
    }

    /// Whether a change at the path whose storage key (`DataPath.storageKey`, UTF-8) is
    /// `changed` touches the location with storage key `location`: one of them is the other
    /// or an ancestor of it (the root is an ancestor of every path). Compared as bytes,
    /// without splitting either into segments: keys never contain "/", so a key is an
    /// ancestor exactly when it is a prefix of the other followed by "/". It is what
    /// `location.isPrefix(of: path) || path.isAncestor(of: location)` says of the paths.
    /// Not generic: a scan calls it once per record read, from another module.
    public static func touches(_ changed: UnsafeBufferPointer<UInt8>, _ location: UnsafeBufferPointer<UInt8>) -> Bool {
        let common = min(changed.count, location.count)
        if common == 0 { return true }
        var i = 0
        while i < common {
            if changed[i] != location[i] { return false }
            i += 1
        }
        if changed.count == location.count { return true }
        return (changed.count > common ? changed[common] : location[common]) == UInt8(ascii: "/")
    }

    /// `touches` on two storage keys as arrays of their UTF-8 bytes.
    public static func touches(_ changed: [UInt8], _ location: [UInt8]) -> Bool {
        changed.withUnsafeBufferPointer { a in location.withUnsafeBufferPointer { b in touches(a, b) } }
    }
}
