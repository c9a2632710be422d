import HearthJSON

/// The writes of a `WriteOverlay`, folded into a trie in which no replaced node has
/// replaced descendants: a later write at or above an earlier one discards it, a later
/// write below an earlier one is merged into its value.
struct OverlayTrie {
    final class Node {
        /// `.some(nil)`: deleted here. `.some(v)`: replaced by `v`. `nil`: untouched here.
        var replacement: JSONValue??
        /// Usually one or two: a list compared byte for byte beats hashing (until
        /// `Children.indexedPast`).
        var children = Children()
        /// Some replacement below this node stores a value (not only deletes).
        var setsBelow = false

        func child(_ key: String) -> Node? { children.node(for: key) }
    }

    /// A node's children in arrival order: the first held inline, the others in an array.
    /// A write's path is a chain of only children, so its nodes allocate no array (each
    /// one did, about four per create's rules check). Past `indexedPast` children they are
    /// also indexed by key: a multi-location update of n siblings would otherwise compare
    /// each new key with all the others, n²/2 comparisons on the request's I/O loop (a
    /// 16,000-child update took seconds).
    struct Children: Sequence {
        /// Children looked up by a scan up to this many; past it, through `index`.
        static let indexedPast = 16
        private var first: (key: String, node: Node)?
        private var others: [(key: String, node: Node)] = []
        /// By key, compared as code units (`JSONKey`), as the scan compares them; built when
        /// the count passes `indexedPast`.
        private var index: [JSONKey: Node]?

        var isEmpty: Bool { first == nil }
        var count: Int { first == nil ? 0 : 1 + others.count }
        /// Whether lookups go through `index` (past `indexedPast` children).
        var isIndexed: Bool { index != nil }

        mutating func append(_ child: (key: String, node: Node)) {
            if first == nil { first = child } else { others.append(child) }
            if index != nil {
                let key = JSONKey(child.key)
                if index?[key] == nil { index?[key] = child.node }
            } else if count > Self.indexedPast {
                var built: [JSONKey: Node] = [:]
                built.reserveCapacity(2 * count)
                // The first child with a key wins, as the scan finds it first.
                for child in self.reversed() { built[JSONKey(child.key)] = child.node }
                index = built
            }
        }

        func node(for key: String) -> Node? {
            if let index { return index[JSONKey(key)] }
            for child in self where child.key.hasSameBytes(as: key) { return child.node }
            return nil
        }

        func makeIterator() -> Iterator { Iterator(children: self) }

        struct Iterator: IteratorProtocol {
            let children: Children
            var position = 0

            mutating func next() -> (key: String, node: Node)? {
                defer { position += 1 }
                if position == 0 { return children.first }
                return position - 1 < children.others.count ? children.others[position - 1] : nil
            }
        }
    }

    let root = Node()

    mutating func apply(path: [String], value: JSONValue?) {
        let normalized = value.flatMap(Self.present)
        var node = root
        for (depth, key) in path.enumerated() {
            if let replacement = node.replacement {
                node.replacement = .some(Self.setting(replacement, at: path[depth...], to: normalized))
                return
            }
            if let child = node.child(key) {
                node = child
            } else {
                let child = Node()
                node.children.append((key, child))
                node = child
            }
        }
        node.replacement = .some(normalized)
        node.children = Children()
    }

    /// Computes `setsBelow` bottom-up.
    func finish() {
        func visit(_ node: Node) -> Bool {
            var below = false
            for child in node.children {
                let childSets = visit(child.node)
                if childSets { below = true }
            }
            node.setsBelow = below
            if let replacement = node.replacement { return replacement != nil }
            return below
        }
        _ = visit(root)
    }

    /// `value` without nulls and empty objects; nil if nothing is left. A value that is
    /// already normalised (the usual case) is returned as it is, without copying.
    static func present(_ value: JSONValue) -> JSONValue? {
        if isClean(value) { return value }
        switch value {
        case .null:
            return nil
        case .bool, .int, .double, .string:
            return value
        case .object(let children):
            var kept: [JSONKey: JSONValue] = [:]
            for (key, child) in children {
                if let child = present(child) { kept[key] = child }
            }
            return kept.isEmpty ? nil : .object(kept)
        case .array(let elements):
            var kept: [JSONKey: JSONValue] = [:]
            for (index, child) in elements.enumerated() {
                if let child = present(child) { kept[String(index)] = child }
            }
            return kept.isEmpty ? nil : .object(kept)
        }
    }

    /// No nulls, empty objects or arrays anywhere: already in stored form.
    private static func isClean(_ value: JSONValue) -> Bool {
        switch value {
        case .null, .array: return false
        case .bool, .int, .double, .string: return true
        case .object(let children): return !children.isEmpty && children.values.allSatisfy(isClean)
        }
    }

    static func descend(_ value: JSONValue?, _ path: ArraySlice<String>) -> JSONValue? {
        var node = value
        for key in path {
            guard let current = node else { return nil }
            node = JSONTreeSource.child(of: current, key)
        }
        return node
    }

    /// `base` with `value` put at `path` (nil deletes), pruning emptied objects.
    static func setting(_ base: JSONValue?, at path: ArraySlice<String>, to value: JSONValue?) -> JSONValue? {
        guard let key = path.first else { return value }
        var children: [JSONKey: JSONValue] = [:]
        if case .object(let existing)? = base {
            children = existing
        } else if base != nil && value == nil {
            return base  // deleting below a leaf changes nothing
        }
        let updated = setting(children[JSONKey(key)], at: path.dropFirst(), to: value)
        children[key] = updated
        return children.isEmpty ? nil : .object(children)
    }
}
