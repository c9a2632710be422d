/// Header fields in arrival order. Names compare case-insensitively (RFC 9110 §5.1);
/// duplicates are kept as separate fields, never merged.
public struct HTTPHeaders: Sendable, Sequence {
    public private(set) var fields: [(name: String, value: String)]

    public init(_ fields: [(name: String, value: String)] = []) {
        self.fields = fields
    }

    public mutating func add(_ name: String, _ value: String) {
        fields.append((name, value))
    }

    /// Replaces every field with this name by one field.
    public mutating func set(_ name: String, _ value: String) {
        fields.removeAll { ASCII.equalsIgnoringCase($0.name, name) }
        fields.append((name, value))
    }

    /// Removes every field whose name satisfies `predicate`.
    public mutating func removeAll(named predicate: (String) -> Bool) {
        fields.removeAll { predicate($0.name) }
    }

    /// The first value of the named field.
    public subscript(name: String) -> String? {
        // Compared byte-wise (field names are ASCII tokens): no lowercased copies per lookup.
        fields.first { ASCII.equalsIgnoringCase($0.name, name) }?.value
    }

    /// Every value of the named field, in order.
    public func values(_ name: String) -> [String] {
        fields.filter { ASCII.equalsIgnoringCase($0.name, name) }.map(\.value)
    }

    public var count: Int { fields.count }

    public func makeIterator() -> IndexingIterator<[(name: String, value: String)]> {
        fields.makeIterator()
    }
}
