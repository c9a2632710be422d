/// Writes the compact JSON text of a tree given as its leaves in path byte order (the
/// order of the store's `nodes` table), byte for byte what
/// `JSONWriter.write(FirebaseTree.render(value))` writes for the assembled value, without
/// building `JSONValue` dictionaries first (for a user's 20 favourites, 140
/// leaves, assembling and re-walking dictionaries was most of a read's CPU).
///
/// The tree is kept as flat arrays: one node per path segment (its key as a range of one
/// byte arena), children as linked lists, leaves already written as JSON into a second
/// arena. Rows sharing a path prefix are contiguous in byte order, so a stack of the
/// previous row's nodes finds the shared part. On `render`, each object's children are
/// put in Firebase key order (`FirebaseKeyOrder`) or written as an array when
/// `FirebaseTree.render` would (dense integer keys).
///
/// A leaf and a subtree at one path cannot both exist in a consistent store; if a row says
/// otherwise the subtree wins, as it does in `value(at:)`.
public struct SortedLeafRenderer {
    /// A leaf's value; string bytes are UTF-8, copied (and escaped) at once.
    public enum Leaf {
        case string(UnsafeBufferPointer<UInt8>)
        case int(Int64)
        case double(Double)
        case bool(Bool)
    }

    private struct Node {
        var keyStart: Int
        var keyCount: Int
        var firstChild = -1
        var lastChild = -1
        var next = -1
        var childCount = 0
        var valueStart = -1
        var valueCount = 0
    }

    private var nodes: [Node] = [Node(keyStart: 0, keyCount: 0)]
    private var keys: [UInt8] = []
    private var values: [UInt8] = []
    /// Node indices from the root to the previous row's leaf.
    private var stack: [Int] = [0]

    public init() {}

    /// Adds one leaf; `path` is relative to the rendered location (segments joined by `/`,
    /// empty for the location itself). Call in path byte order.
    public mutating func append(path: UnsafeBufferPointer<UInt8>, leaf: Leaf) {
        var depth = 0
        if !path.isEmpty {
            var start = 0
            while true {
                var end = start
                while end < path.count && path[end] != UInt8(ascii: "/") { end += 1 }
                let segment = UnsafeBufferPointer(rebasing: path[start..<end])
                if depth + 1 < stack.count && keyEquals(stack[depth + 1], segment) {
                    depth += 1
                } else {
                    stack.removeSubrange((depth + 1)...)
                    stack.append(addChild(of: stack[depth], key: segment))
                    depth += 1
                }
                if end == path.count { break }
                start = end + 1
            }
        }
        stack.removeSubrange((depth + 1)...)
        let node = stack[depth]
        let start = values.count
        switch leaf {
        case .string(let bytes):
            values.append(UInt8(ascii: "\""))
            JSONWriter.escape(bytes, into: &values)
            values.append(UInt8(ascii: "\""))
        case .int(let n): JSONWriter.writeInt(n, into: &values)
        case .double(let d): JSONWriter.writeDouble(d, into: &values)
        case .bool(let b): values.append(contentsOf: b ? "true".utf8 : "false".utf8)
        }
        nodes[node].valueStart = start
        nodes[node].valueCount = values.count - start
    }

    /// The JSON text (`null` when no leaf was added).
    public func render() -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(keys.count + values.count + 4 * nodes.count + 8)
        keys.withUnsafeBufferPointer { keys in
            values.withUnsafeBufferPointer { values in
                write(0, keys: keys, values: values, into: &out)
            }
        }
        return out
    }

    // MARK: Building

    private func keyEquals(_ node: Int, _ segment: UnsafeBufferPointer<UInt8>) -> Bool {
        let n = nodes[node]
        guard n.keyCount == segment.count else { return false }
        return keys.withUnsafeBufferPointer { keys in
            var i = 0
            while i < segment.count {
                if keys[n.keyStart + i] != segment[i] { return false }
                i += 1
            }
            return true
        }
    }

    private mutating func addChild(of p: Int, key: UnsafeBufferPointer<UInt8>) -> Int {
        let index = nodes.count
        nodes.append(Node(keyStart: keys.count, keyCount: key.count))
        keys.append(contentsOf: key)
        if nodes[p].lastChild >= 0 {
            nodes[nodes[p].lastChild].next = index
        } else {
            nodes[p].firstChild = index
        }
        nodes[p].lastChild = index
        nodes[p].childCount += 1
        return index
    }

    // MARK: Writing

    private func key(_ node: Node, _ keys: UnsafeBufferPointer<UInt8>) -> UnsafeBufferPointer<UInt8> {
        UnsafeBufferPointer(rebasing: keys[node.keyStart..<node.keyStart + node.keyCount])
    }

    private func write(_ index: Int, keys: UnsafeBufferPointer<UInt8>, values: UnsafeBufferPointer<UInt8>, into out: inout [UInt8]) {
        let node = nodes[index]
        guard node.firstChild >= 0 else {
            if node.valueStart >= 0 {
                out.append(contentsOf: UnsafeBufferPointer(rebasing: values[node.valueStart..<node.valueStart + node.valueCount]))
            } else {
                out.append(contentsOf: "null".utf8)
            }
            return
        }
        var children: [Int] = []
        children.reserveCapacity(node.childCount)
        var child = node.firstChild
        while child >= 0 {
            children.append(child)
            child = nodes[child].next
        }
        // An array when every key is a canonical index and the largest is below twice the
        // count (FirebaseTree.render); holes are null.
        var indices: [Int] = []
        indices.reserveCapacity(children.count)
        for c in children {
            guard let i = FirebaseTree.canonicalIndex(utf8: key(nodes[c], keys)) else { break }
            indices.append(i)
        }
        if indices.count == children.count, let maxIndex = indices.max(), maxIndex < 2 * children.count {
            var slots = [Int](repeating: -1, count: maxIndex + 1)
            for (c, i) in zip(children, indices) { slots[i] = c }
            out.append(UInt8(ascii: "["))
            for (position, c) in slots.enumerated() {
                if position > 0 { out.append(UInt8(ascii: ",")) }
                if c >= 0 { write(c, keys: keys, values: values, into: &out) } else { out.append(contentsOf: "null".utf8) }
            }
            out.append(UInt8(ascii: "]"))
            return
        }
        var order = children.map { c in (node: c, int: FirebaseKeyOrder.int32Value(utf8: key(nodes[c], keys))) }
        order.sort { a, b in
            FirebaseKeyOrder.compare(key(nodes[a.node], keys), a.int, key(nodes[b.node], keys), b.int) < 0
        }
        out.append(UInt8(ascii: "{"))
        for (position, entry) in order.enumerated() {
            if position > 0 { out.append(UInt8(ascii: ",")) }
            out.append(UInt8(ascii: "\""))
            JSONWriter.escape(key(nodes[entry.node], keys), into: &out)
            out.append(UInt8(ascii: "\""))
            out.append(UInt8(ascii: ":"))
            write(entry.node, keys: keys, values: values, into: &out)
        }
        out.append(UInt8(ascii: "}"))
    }
}
