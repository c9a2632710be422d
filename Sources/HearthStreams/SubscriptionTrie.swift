import HearthJSON

/// Subscriptions indexed by location, one node per path segment (docs/design.md §3 step 5):
/// finding who hears of a change walks the change's path (depth), then only the subtree
/// of subscribers below it; never the whole subscriber list.
///
/// Not thread-safe: the hub keeps it inside a `Mutex`.
struct SubscriptionTrie {
    final class Node {
        let location: DataPath
        var children: [JSONKey: Node] = [:]
        var subscribers: [ObjectIdentifier: Subscription] = [:]

        init(location: DataPath) {
            self.location = location
        }
    }

    /// The subscribers of one location, copied out of the trie.
    struct Match {
        let location: DataPath
        let subscribers: [Subscription]
    }

    private let root = Node(location: .root)

    func insert(_ subscription: Subscription) {
        var node = root
        let segments = subscription.location.segments
        for (depth, key) in segments.enumerated() {
            if let next = node.children[key] {
                node = next
            } else {
                // A leaf shares its subscription's path (one array fewer per own-path listen).
                let location = depth == segments.count - 1
                    ? subscription.location : DataPath(uncheckedSegments: Array(segments[0...depth]))
                let next = Node(location: location)
                node.children[key] = next
                node = next
            }
        }
        node.subscribers[ObjectIdentifier(subscription)] = subscription
    }

    /// Removes `subscription` and prunes nodes left empty.
    func remove(_ subscription: Subscription) {
        var trail: [(Node, String)] = []
        var node = root
        for key in subscription.location.segments {
            guard let next = node.children[key] else { return }
            trail.append((node, key))
            node = next
        }
        node.subscribers[ObjectIdentifier(subscription)] = nil
        while let (parent, key) = trail.popLast() {
            guard let child = parent.children[key], child.subscribers.isEmpty, child.children.isEmpty else { break }
            parent.children[key] = nil
        }
    }

    /// Every location a change at `path` may touch: its ancestors, itself, and all
    /// subscribed locations below it.
    func matches(_ path: DataPath) -> [Match] {
        var result: [Match] = []
        var node = root
        var depth = 0
        while true {
            if !node.subscribers.isEmpty {
                result.append(Match(location: node.location, subscribers: Array(node.subscribers.values)))
            }
            guard depth < path.count, let next = node.children[path.segments[depth]] else { break }
            node = next
            depth += 1
        }
        if depth == path.count {
            var stack = Array(node.children.values)
            while let below = stack.popLast() {
                if !below.subscribers.isEmpty {
                    result.append(Match(location: below.location, subscribers: Array(below.subscribers.values)))
                }
                stack.append(contentsOf: below.children.values)
            }
        }
        return result
    }

    /// Subscribed locations strictly below `path`, or nil when there are more than `limit`.
    func locations(below path: DataPath, limit: Int) -> [DataPath]? {
        var node = root
        for key in path.segments {
            guard let next = node.children[key] else { return [] }
            node = next
        }
        var result: [DataPath] = []
        var stack = Array(node.children.values)
        while let below = stack.popLast() {
            if !below.subscribers.isEmpty {
                if result.count == limit { return nil }
                result.append(below.location)
            }
            stack.append(contentsOf: below.children.values)
        }
        return result
    }

    var isEmpty: Bool { root.children.isEmpty && root.subscribers.isEmpty }
}
