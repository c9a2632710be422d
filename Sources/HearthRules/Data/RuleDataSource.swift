import HearthJSON

/// Read-only access to a data tree, the only way rules see data (docs/protocol/rules.md
/// §3.4; the rules engine never reaches a store directly, docs/architecture.md).
///
/// The server adapts the storage engine's `TreeView` to this; `JSONTreeSource` serves an in-memory
/// tree and `WriteOverlay` the tree as it would be after a write (`newData`). Errors thrown
/// here deny the whole decision: an unreadable store never grants anything.
public protocol RuleDataSource {
    /// The string, number or boolean stored at `path`; nil if nothing is there or the node
    /// has children.
    func leaf(at path: DataPath) throws -> JSONValue?
    /// The keys of the node's children, in any order; empty for a leaf or a missing node.
    func childKeys(at path: DataPath) throws -> [String]
    /// Whether anything is stored at or below `path`.
    func exists(at path: DataPath) throws -> Bool
    /// At most `limit` child keys, in any order. Implement it when listing every child is
    /// expensive (a store can stop its scan early); the default lists them all.
    func childKeys(at path: DataPath, limit: Int) throws -> [String]
    /// The whole value at `path` when this source holds it in memory (`.some(nil)`: nothing
    /// is there), or nil when it would have to read for it: lets a rule test several
    /// children with one lookup (`hasChildren`). The default holds nothing in memory.
    func valueInMemory(at path: DataPath) -> JSONValue??
}

extension RuleDataSource {
    public func valueInMemory(at path: DataPath) -> JSONValue?? {
        nil
    }

    public func childKeys(at path: DataPath, limit: Int) throws -> [String] {
        Array(try childKeys(at: path).prefix(limit))
    }
}
