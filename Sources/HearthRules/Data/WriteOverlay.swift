import HearthJSON

/// The tree as it would be after a write: a base source with replacements applied on top,
/// in order. This is what `newData` reads (docs/protocol/rules.md §3.3: "existing data
/// merged with the incoming data"; §3.2: for a multi-path update, the state after *all*
/// parts apply).
///
/// Each replacement puts `value` at `path` (`nil`, `.null` or an empty object deletes).
/// Values should be normalised (no arrays, no nulls inside); a node left without children
/// does not exist. Setting a child under a leaf replaces the leaf; deleting under a leaf
/// leaves it alone. Lookups cost O(path depth) plus the base lookups they need; nothing
/// of the base tree is copied.
public struct WriteOverlay: RuleDataSource {
    public let base: any RuleDataSource
    private let trie: OverlayTrie

    public init(base: any RuleDataSource, writes: [(path: DataPath, value: JSONValue?)]) {
        self.base = base
        var trie = OverlayTrie()
        for write in writes {
            trie.apply(path: write.path.segments, value: write.value)
        }
        trie.finish()
        self.trie = trie
    }

    private enum Location {
        /// No write touches this path or anything below it.
        case base
        /// A write replaced an ancestor-or-self; here is the value at the path.
        case replaced(JSONValue?)
        /// Writes replaced some descendants only.
        case interior(OverlayTrie.Node)
    }

    private func locate(_ path: DataPath) -> Location {
        var node = trie.root
        let segments = path.segments
        for (depth, key) in segments.enumerated() {
            if let replacement = node.replacement {
                return .replaced(OverlayTrie.descend(replacement, segments[depth...]))
            }
            guard let child = node.child(key) else { return .base }
            node = child
        }
        if let replacement = node.replacement { return .replaced(replacement) }
        return node.children.isEmpty ? .base : .interior(node)
    }

    public func leaf(at path: DataPath) throws -> JSONValue? {
        switch locate(path) {
        case .base:
            return try base.leaf(at: path)
        case .replaced(let value):
            guard let value, value.isLeaf else { return nil }
            return value
        case .interior(let node):
            return node.setsBelow ? nil : try base.leaf(at: path)
        }
    }

    public func exists(at path: DataPath) throws -> Bool {
        switch locate(path) {
        case .base:
            return try base.exists(at: path)
        case .replaced(let value):
            // Replacement values are cleaned (`OverlayTrie.present`): anything there exists.
            return value != nil
        case .interior(let node):
            if node.setsBelow { return true }
            // Only deletes below: the node survives if it is a leaf, or if some base child
            // is untouched or still exists.
            if try base.leaf(at: path) != nil { return true }
            let sample = try base.childKeys(at: path, limit: node.children.count + 1)
            for key in sample {
                if node.child(key) == nil { return true }
                if try exists(at: path.childPath(key)) { return true }
            }
            return false
        }
    }

    /// A replaced location's value (what a set wrote there); nil elsewhere.
    public func valueInMemory(at path: DataPath) -> JSONValue?? {
        if case .replaced(let value) = locate(path) { return .some(value) }
        return nil
    }

    public func childKeys(at path: DataPath) throws -> [String] {
        switch locate(path) {
        case .base:
            return try base.childKeys(at: path)
        case .replaced(let value):
            return value.map(JSONTreeSource.keys(of:)) ?? []
        case .interior(let node):
            if !node.setsBelow, try base.leaf(at: path) != nil { return [] }
            var keys: [String] = []
            let baseKeys = try base.childKeys(at: path)
            for key in baseKeys {
                if node.child(key) == nil {
                    keys.append(key)
                } else if try exists(at: path.childPath(key)) {
                    keys.append(key)
                }
            }
            // The written keys the base lacks. A few written children (a create's one) are
            // each looked for in the base's keys; many are looked up in a set of them (code
            // units, as `hasSameBytes`): a multi-location update of n children under n
            // stored ones would otherwise be n² comparisons.
            let isNew: (String) -> Bool
            if node.children.count > OverlayTrie.Children.indexedPast {
                let stored = Set(baseKeys.map { JSONKey($0) })
                isNew = { !stored.contains(JSONKey($0)) }
            } else {
                isNew = { key in !baseKeys.contains { $0.hasSameBytes(as: key) } }
            }
            for (key, _) in node.children where isNew(key) {
                if try exists(at: path.childPath(key)) { keys.append(key) }
            }
            return keys
        }
    }
}

extension DataPath {
    /// The child path, without key validation (keys come from data or from rules).
    func childPath(_ key: String) -> DataPath {
        DataPath(uncheckedSegments: segments + [key])
    }
}
