/// An object key (and a path segment) compared as Firebase compares keys: by its exact code
/// units, never by Unicode canonical equivalence.
///
/// Swift's `String` equality and hashing treat canonically equivalent strings as equal:
/// `"caf\u{E9}" == "cafe\u{301}"` and `"\u{212B}" == "\u{C5}"`. Firebase (JavaScript strings,
/// UTF-16 code units) keeps such keys apart, so a `[JSONKey: JSONValue]` would merge two
/// members a client wrote as distinct and acknowledge a write that lost one of them. Every
/// keyed collection of tree data uses `JSONKey` instead; equal UTF-8 bytes is the same
/// relation as equal UTF-16 code units, since both encode the same scalars.
///
/// Order is Firebase key order (`FirebaseKeyOrder`), itself by code units.
public struct JSONKey: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// The key's text.
    public let string: String

    @inlinable
    public init(_ string: String) {
        self.string = string
    }

    public static func == (a: JSONKey, b: JSONKey) -> Bool {
        a.string.sameCodeUnits(as: b.string)
    }

    public func hash(into hasher: inout Hasher) {
        string.hashCodeUnits(into: &hasher)
    }

    public static func < (a: JSONKey, b: JSONKey) -> Bool {
        FirebaseKeyOrder.less(a.string, b.string)
    }

    public var description: String { string }

    /// The key's UTF-8 bytes.
    public var utf8: String.UTF8View { string.utf8 }
}

extension JSONKey: ExpressibleByStringLiteral {
    public init(stringLiteral value: String) { self.string = value }
}

extension String {
    /// True when both strings have exactly the same code units (unlike `==`, which is
    /// canonical equivalence). Firebase's notion of equal keys and paths.
    @inlinable
    public func sameCodeUnits(as other: String) -> Bool {
        let a = utf8, b = other.utf8
        guard a.count == b.count else { return false }
        let contiguous = a.withContiguousStorageIfAvailable { x in
            b.withContiguousStorageIfAvailable { y in x.elementsEqual(y) }
        }
        if let result = contiguous ?? nil { return result }
        return a.elementsEqual(b)
    }

    /// Feeds the string's UTF-8 bytes (and their count) to `hasher`: a hash consistent with
    /// `sameCodeUnits(as:)`.
    @inlinable
    public func hashCodeUnits(into hasher: inout Hasher) {
        let bytes = utf8
        hasher.combine(bytes.count)
        if bytes.withContiguousStorageIfAvailable({ hasher.combine(bytes: UnsafeRawBufferPointer($0)) }) == nil {
            for byte in bytes { hasher.combine(byte) }
        }
    }
}

extension Dictionary where Key == JSONKey {
    /// Lookup by a plain string, compared by code units like every `JSONKey`.
    @inlinable
    public subscript(key: String) -> Value? {
        get { self[JSONKey(key)] }
        set { self[JSONKey(key)] = newValue }
    }

    /// Lookup with a default by a plain string, compared by code units.
    @inlinable
    public subscript(key: String, default defaultValue: @autoclosure () -> Value) -> Value {
        get { self[JSONKey(key), default: defaultValue()] }
        set { self[JSONKey(key)] = newValue }
    }
}

extension Sequence where Element == JSONKey {
    /// The keys' texts.
    public var strings: [String] { map(\.string) }
}

extension Sequence where Element == String {
    /// `starts(with:)` comparing keys by code units (`JSONKey`), for path segments.
    @inlinable
    public func starts<Prefix: Sequence<String>>(byCodeUnitsWith prefix: Prefix) -> Bool {
        starts(with: prefix) { $0.sameCodeUnits(as: $1) }
    }
}

extension JSONValue {
    /// An object from members keyed by plain strings: for fixed, known keys (claims,
    /// responses, fixtures). Data written by clients never passes through a `String`-keyed
    /// dictionary, which would merge canonically equivalent keys before this sees them.
    public static func object(_ members: [String: JSONValue]) -> JSONValue {
        .object(Dictionary(uniqueKeysWithValues: members.map { (JSONKey($0.key), $0.value) }))
    }
}
