import HearthJSON

/// A `RuleDataSource` over an in-memory tree (tests, the CLI, the conformance runner).
///
/// The value should be normalised (HearthJSON `FirebaseTree.normalize`): no nulls, no
/// empty objects, arrays as integer-keyed objects. Arrays and empty objects are still read
/// defensively: an array's children are its indices, an empty object does not exist.
public struct JSONTreeSource: RuleDataSource, Sendable {
    public let root: JSONValue?

    public init(_ root: JSONValue?) {
        self.root = root
    }

    public func node(at path: DataPath) -> JSONValue? {
        var node = root
        for key in path.segments {
            guard let current = node else { return nil }
            node = JSONTreeSource.child(of: current, key)
        }
        return node
    }

    public func leaf(at path: DataPath) -> JSONValue? {
        guard let node = node(at: path), node.isLeaf else { return nil }
        return node
    }

    public func childKeys(at path: DataPath) -> [String] {
        guard let node = node(at: path) else { return [] }
        return JSONTreeSource.keys(of: node)
    }

    public func exists(at path: DataPath) -> Bool {
        guard let node = node(at: path) else { return false }
        return JSONTreeSource.isPresent(node)
    }

    /// A child by key; arrays by decimal index. Keys compare by their exact UTF-8 bytes.
    static func child(of node: JSONValue, _ key: String) -> JSONValue? {
        switch node {
        case .object(let children):
            return children[JSONKey(key)]
        case .array(let elements):
            guard let index = Int(key), String(index) == key, elements.indices.contains(index) else { return nil }
            return elements[index]
        default:
            return nil
        }
    }

    static func keys(of node: JSONValue) -> [String] {
        switch node {
        case .object(let children):
            return children.compactMap { isPresent($0.value) ? $0.key.string : nil }
        case .array(let elements):
            return elements.indices.compactMap { isPresent(elements[$0]) ? String($0) : nil }
        default:
            return []
        }
    }

    static func isPresent(_ node: JSONValue) -> Bool {
        switch node {
        case .null: return false
        case .bool, .int, .double, .string: return true
        case .object(let children): return children.values.contains(where: isPresent)
        case .array(let elements): return elements.contains(where: isPresent)
        }
    }
}
