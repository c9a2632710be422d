/// A validated location in the data tree: a list of keys from the root
/// (docs/protocol/rest.md §1.7).
///
/// Every segment is a valid key (`DataPath.validateKey`), and there are at most
/// `maxSegments` of them. The depth rule: Firebase's limit is "each path must be fewer than
/// 32 levels deep" (`maxDepth`). Hearth counts levels as segments, so a path, including
/// the path of the deepest leaf inside a written value, has at most 31 segments. The root
/// is the empty path. (The client SDKs' own check, js-sdk `ValidationPath`, lets 32 parts
/// through; being one stricter means anything Hearth accepts, Firebase accepts.)
///
/// Ways in:
/// * `init(urlPath:)`: a raw, percent-encoded URL path such as `/users/a%20b.json`
///   (DataPath+URL.swift);
/// * `init(string:)`: a plain slash path `a/b/c`, as in multi-path update keys;
/// * `init(segments:)`: already split keys, validated;
/// * `init(uncheckedSegments:)`: keys known to be valid (read back from the store).
public struct DataPath: Sendable, Hashable {
    /// Paths must be *fewer than* this many levels deep (docs/protocol/rest.md §1.7).
    public static let maxDepth = 32
    /// The most segments a path may have: `maxDepth - 1`.
    public static let maxSegments = maxDepth - 1

    /// The keys from the root down. Empty for the root.
    public let segments: [String]

    /// The root of the tree.
    public static let root = DataPath(uncheckedSegments: [])

    /// Validates every segment as a key and the depth.
    public init(segments: [String]) throws(PathError) {
        guard segments.count <= Self.maxSegments else { throw .tooDeep(depth: segments.count) }
        for segment in segments { try Self.validateKey(segment) }
        self.segments = segments
    }

    /// Wraps segments that are already known to be valid keys, e.g. read back from storage.
    /// Validity is only checked in debug builds.
    public init(uncheckedSegments segments: [String]) {
        assert(segments.count <= Self.maxSegments && segments.allSatisfy(Self.isValidKey))
        self.segments = segments
    }

    /// Parses a plain slash-separated path such as `a/b/c` or `/a/b/`. Empty segments are
    /// ignored (as in js-sdk `Path`), so `""` and `"/"` are the root. No percent-decoding.
    public init(string: some StringProtocol) throws(PathError) {
        var segments: [String] = []
        for piece in string.utf8.split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: true) {
            guard segments.count < Self.maxSegments else {
                throw .tooDeep(depth: string.utf8.split(separator: UInt8(ascii: "/")).count)
            }
            let key = String(decoding: piece, as: UTF8.self)
            try Self.validateKey(key)
            segments.append(key)
        }
        self.segments = segments
    }

    // MARK: Navigation

    public var isRoot: Bool { segments.isEmpty }

    /// The number of segments (0 for the root).
    public var count: Int { segments.count }

    /// The last segment (this node's key), or nil for the root.
    public var key: String? { segments.last }

    /// The path one level up, or nil for the root.
    public var parent: DataPath? {
        isRoot ? nil : DataPath(uncheckedSegments: Array(segments.dropLast()))
    }

    /// The path of child `key`, validating the key and the depth.
    public func child(_ key: String) throws(PathError) -> DataPath {
        try Self.validateKey(key)
        guard segments.count < Self.maxSegments else { throw .tooDeep(depth: segments.count + 1) }
        return DataPath(uncheckedSegments: segments + [key])
    }

    /// This path followed by `other`'s segments, checking the combined depth.
    public func appending(_ other: DataPath) throws(PathError) -> DataPath {
        let depth = segments.count + other.segments.count
        guard depth <= Self.maxSegments else { throw .tooDeep(depth: depth) }
        return DataPath(uncheckedSegments: segments + other.segments)
    }

    /// True when `other` lies strictly below this path (the root is an ancestor of all
    /// other paths; a path is not its own ancestor).
    public func isAncestor(of other: DataPath) -> Bool {
        other.segments.count > segments.count && isPrefix(of: other)
    }

    /// True when this path equals `other` or is an ancestor of it (js-sdk `pathContains`).
    public func isPrefix(of other: DataPath) -> Bool {
        other.segments.count >= segments.count && other.segments.starts(with: segments) { $0.sameCodeUnits(as: $1) }
    }

    /// `other` expressed relative to this path, when this path is a prefix of it.
    public func relativePath(to other: DataPath) -> DataPath? {
        guard isPrefix(of: other) else { return nil }
        return DataPath(uncheckedSegments: Array(other.segments.dropFirst(segments.count)))
    }

    // MARK: Text forms

    /// The segments joined by "/", without a leading slash: `a/b`; "" for the root.
    /// Keys never contain "/", so this is unambiguous and sorts subtrees contiguously
    /// (docs/design.md §4).
    public var storageKey: String { segments.joined(separator: "/") }
}

extension DataPath {
    /// Equal when every segment has the same code units (`JSONKey`): canonically
    /// equivalent keys are different locations, as in Firebase.
    public static func == (a: DataPath, b: DataPath) -> Bool {
        a.segments.count == b.segments.count && a.segments.elementsEqual(b.segments) { $0.sameCodeUnits(as: $1) }
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(segments.count)
        for segment in segments { segment.hashCodeUnits(into: &hasher) }
    }
}

extension DataPath: CustomStringConvertible {
    /// `/a/b`, and `/` for the root (the form used in SSE `path` fields,
    /// docs/protocol/streaming.md §2).
    public var description: String { "/" + storageKey }
}

extension DataPath: Comparable {
    /// Segment by segment in Firebase key order, a prefix before its extensions
    /// (js-sdk `pathCompare`). Ancestors therefore sort directly before their descendants.
    public static func < (lhs: DataPath, rhs: DataPath) -> Bool {
        for (a, b) in zip(lhs.segments, rhs.segments) where !a.sameCodeUnits(as: b) {
            return FirebaseKeyOrder.less(a, b)
        }
        return lhs.segments.count < rhs.segments.count
    }
}
