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
        private(set) var subscribers: [ObjectIdentifier: Subscription] = [:]
        /// `subscribers` as an array, made by the first match after a change and shared by
        /// every match until the next one: a change at a location with 10,000 listeners
        /// copies no list and retains one buffer, not 10,000 subscriptions.
        private var list: [Subscription]?
        /// Changes with every change of `subscribers`; unique across the trie's nodes and
        /// their lifetimes, so the hub can tell that a location's set is the one it saw.
        private(set) var generation: UInt64

        init(location: DataPath, generation: UInt64) {
            self.location = location
            self.generation = generation
        }

        func set(_ id: ObjectIdentifier, _ subscription: Subscription?, generation: UInt64) {
            subscribers[id] = subscription
            list = nil
            self.generation = generation
        }

        var subscriberList: [Subscription] {
            if let list { return list }
            let made = Array(subscribers.values)
            list = made
            return made
        }
    }

    /// The subscribers of one location, as the trie held them at `generation`.
    struct Match {
        let location: DataPath
        let subscribers: [Subscription]
        let generation: UInt64
    }

    private let root = Node(location: .root, generation: 0)
    private var lastGeneration: UInt64 = 0

    private mutating func nextGeneration() -> UInt64 {
        lastGeneration += 1
        return lastGeneration
    }

    mutating func insert(_ subscription: Subscription) {
        var node = root
        let segments = subscription.location.segments
        for (depth, key) in segments.enumerated() {
            if let next = node.children[key] {
                node = next
            } else {
                // A leaf shares its subscription's path (one array fewer per own-path listen).
                let location = depth == segments.count - 1
                    ? subscription.location : DataPath(uncheckedSegments: Array(segments[0...depth]))
                let next = Node(location: location, generation: nextGeneration())
                node.children[key] = next
                node = next
            }
        }
        node.set(ObjectIdentifier(subscription), subscription, generation: nextGeneration())
    }

    /// Removes `subscription` and prunes nodes left empty.
    mutating func remove(_ subscription: Subscription) {
        var trail: [(Node, String)] = []
        var node = root
        for key in subscription.location.segments {
            guard let next = node.children[key] else { return }
            trail.append((node, key))
            node = next
        }
        guard node.subscribers[ObjectIdentifier(subscription)] != nil else { return }
        node.set(ObjectIdentifier(subscription), nil, generation: nextGeneration())
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
                result.append(Match(location: node.location, subscribers: node.subscriberList, generation: node.generation))
            }
            guard depth < path.count, let next = node.children[path.segments[depth]] else { break }
            node = next
            depth += 1
        }
        if depth == path.count {
            var stack = Array(node.children.values)
            while let below = stack.popLast() {
                if !below.subscribers.isEmpty {
                    result.append(Match(location: below.location, subscribers: below.subscriberList, generation: below.generation))
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
