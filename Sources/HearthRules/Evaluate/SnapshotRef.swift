import HearthJSON

/// A RuleDataSnapshot value (docs/protocol/rules.md §3.4): a location in one of the two
/// views of the tree.
struct SnapshotRef: Sendable {
    enum View: Sendable {
        /// The tree before the operation (`root`, `data`).
        case before
        /// The tree after the write (`newData`).
        case after
    }

    let view: View
    /// The keys from the root, as the rule built them (may include keys Firebase cannot
    /// store, e.g. from `child('a.b')`).
    let segments: [String]
    /// The same location as a valid `DataPath`, or nil when no data can exist there (an
    /// invalid key, or deeper than the tree allows): the snapshot is then empty and the
    /// store is not asked (corpus `expr-child-invalid-key-chars`).
    let path: DataPath?

    init(view: View, path: DataPath) {
        self.view = view
        self.segments = path.segments
        self.path = path
    }

    private init(view: View, segments: [String], reachable: Bool) {
        self.view = view
        self.segments = segments
        let storable = reachable && segments.count <= DataPath.maxSegments
        self.path = storable ? DataPath(uncheckedSegments: segments) : nil
    }

    /// `child(path)`: a slash-separated relative path; empty segments are ignored.
    func child(_ relative: String) -> SnapshotRef {
        var segments = self.segments
        var reachable = path != nil
        if !relative.utf8.contains(UInt8(ascii: "/")) {
            // The usual case, `child('name')`: one key, no splitting.
            if relative.isEmpty { return self }
            segments.append(relative)
            return SnapshotRef(view: view, segments: segments, reachable: reachable && DataPath.isValidKey(relative))
        }
        for part in relative.utf8.split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: true) {
            let key = String(decoding: part, as: UTF8.self)
            if !DataPath.isValidKey(key) { reachable = false }
            segments.append(key)
        }
        return SnapshotRef(view: view, segments: segments, reachable: reachable)
    }

    /// `parent()`; nil at the root (a runtime error, docs/protocol/rules.md §3.4).
    func parent() -> SnapshotRef? {
        guard !segments.isEmpty else { return nil }
        let parentSegments = Array(segments.dropLast())
        let reachable = path != nil || parentSegments.allSatisfy(DataPath.isValidKey)
        return SnapshotRef(view: view, segments: parentSegments, reachable: reachable)
    }

    var displayPath: String {
        "/" + segments.joined(separator: "/")
    }
}
