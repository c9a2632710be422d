import HearthJSON

/// Compound hashes (wire spec §4.2, §3.3): the iOS and Android SDKs re-listen to a cached
/// location with `ch: {hs: [h1…hn], ps: [p1…p(n-1)]}`, their cache cut into n ranges at the
/// leaf paths `ps` (relative to the listen), each hashed with the SDKs' "v2" string form.
/// The server hashes its own value over the same ranges and answers with a range merge
/// (`rm`) of only those that differ, instead of the whole value.
///
/// Written from the iOS SDK's `FCompoundHash` (its builder, run here over the server's
/// value with the client's cut points instead of its size-based split) and `FRangeMerge`
/// (a range is (start, end]: after the previous cut, up to and including this one):
/// - the leaves are visited depth first, children in key order; a node's `.priority` is
///   visited as a child just before the first key above ".priority" (and, as in the SDK,
///   not at all when no key is above it);
/// - a range's text is `(`, then for the path it starts inside of `"key":(` per level,
///   then per child `"key":(` … `)` (comma-separated), a leaf as
///   `[priority:<leaf>:]<type>:<value>` with strings quoted (`"` and `\` escaped by `\`)
///   and numbers as the 16 hex digits of their double; closed with one `)` per open level
///   and a final `)`; hashed as `base64(SHA-1(UTF-8))`. A range without leaves hashes "".
///
/// One walk hashes every range (`RangeHasher`, its text streamed into one byte buffer);
/// only the ranges that differ are then cut out of the value (`slice`), from the top-level
/// children the walk saw them span.
public enum CompoundHash {
    /// A range that differs: the client's cut before it (nil: from the start), its cut at
    /// its end (nil: to the end), and the server's data in it (`null` when none).
    public struct Range: Sendable, Equatable {
        public var start: String?
        public var end: String?
        public var value: JSONValue
    }

    /// A key with its integer form (parsed once, for `FirebaseKeyOrder`).
    struct Key {
        var text: String
        var int: Int32?

        init(_ text: String) {
            self.text = text
            self.int = FirebaseKeyOrder.int32Value(text)
        }

        init(text: String, int: Int32?) {
            self.text = text
            self.int = int
        }

        init(index: Int) {
            self.text = String(index)
            self.int = Int32(exactly: index)
        }

        func compare(_ other: Key) -> Int {
            FirebaseKeyOrder.compare(text, int, other.text, other.int)
        }
    }

    /// A child as the walk visits it.
    struct Child {
        var key: Key
        var value: JSONValue
    }

    /// The ranges of `value` (in export or client form) whose hash is not the client's:
    /// `hashes` has one more entry than `posts` (paths like `/a/b`). Nil when the compound
    /// hash is malformed (the caller then sends the whole value).
    public static func changedRanges(_ value: JSONValue, hashes: [String], posts: [String]) -> [Range]? {
        guard hashes.count == posts.count + 1 else { return nil }
        let cuts = posts.map(pathKeys)
        let top = children(of: value)
        var hasher = RangeHasher(cuts: cuts)
        hasher.walk(value, top: top)
        var changed: [Range] = []
        for index in hashes.indices where hasher.hashes[index] != hashes[index] {
            let lower = index == 0 ? nil : cuts[index - 1][...]
            let upper = index == posts.count ? nil : cuts[index][...]
            let data: JSONValue
            if isLeafNode(value) {
                data = slice(value, after: lower, upTo: upper)
            } else if let span = hasher.spans[index] {
                data = slice(top[span], after: lower, upTo: upper)
            } else {
                data = .null
            }
            changed.append(Range(start: index == 0 ? nil : posts[index - 1], end: index == posts.count ? nil : posts[index],
                                 value: data))
        }
        return changed
    }

    /// True for a value the walk takes as one leaf: a primitive, `null` (no leaf at all),
    /// or `{".value": leaf, ".priority": p}`.
    static func isLeafNode(_ value: JSONValue) -> Bool {
        switch value {
        case .null, .bool, .int, .double, .string: return true
        case .array: return false
        case .object(let members): return members[".value"]?.isLeaf ?? false
        }
    }

    /// The children of a non-leaf in walk order: an array's by index; an object's in key
    /// order without `.value`, its leaf `.priority` just before the first key above
    /// ".priority" (none when no key is above it). Empty for a leaf.
    static func children(of value: JSONValue) -> [Child] {
        switch value {
        case .null, .bool, .int, .double, .string:
            return []
        case .array(let items):
            return items.enumerated().map { Child(key: Key(index: $0.offset), value: $0.element) }
        case .object(let members):
            return children(of: members) ?? []
        }
    }

    /// `children(of:)` of an object, in one pass over its members; nil when it is a leaf
    /// (`.value` holds one). Sorts member indices (plain integers), as JSONWriter does.
    static func children(of members: [JSONKey: JSONValue]) -> [Child]? {
        var order: [(index: Dictionary<JSONKey, JSONValue>.Index, int: Int32?)] = []
        order.reserveCapacity(members.count)
        var priority: JSONValue?
        for index in members.indices {
            let key = members.keys[index].string
            if key.utf8.first == UInt8(ascii: ".") {
                if key == ".value" {
                    if members.values[index].isLeaf { return nil }
                    continue
                }
                if key == ".priority" {
                    priority = members.values[index]
                    continue
                }
            }
            order.append((index, FirebaseKeyOrder.int32Value(key)))
        }
        order.sort { a, b in
            FirebaseKeyOrder.compare(members.keys[a.index].string, a.int, members.keys[b.index].string, b.int) < 0
        }
        var children: [Child] = []
        children.reserveCapacity(order.count + 1)
        for entry in order {
            let member = members[entry.index]
            children.append(Child(key: Key(text: member.key.string, int: entry.int), value: member.value))
        }
        if let priority, priority.isLeaf {
            let key = Key(".priority")
            if let at = children.firstIndex(where: { $0.key.compare(key) > 0 }) {
                children.insert(Child(key: key, value: priority), at: at)
            }
        }
        return children
    }

    /// The part of `value` whose leaves lie after the relative path `lower` (nil: no bound)
    /// and up to and including `upper` (nil: no bound), as an object keyed like `value`
    /// (arrays become objects keyed by index); `null` when no leaf is in it.
    static func slice(_ value: JSONValue, after lower: ArraySlice<String>?, upTo upper: ArraySlice<String>?) -> JSONValue {
        // A leaf's path is a prefix of (or is) any bound it meets: before `lower`, within `upper`.
        if isLeafNode(value) { return lower == nil ? value : .null }
        return slice(children(of: value)[...], after: lower, upTo: upper)
    }

    /// `slice` of a non-leaf given as (some of) its children, in walk order.
    static func slice(_ children: ArraySlice<Child>, after lower: ArraySlice<String>?, upTo upper: ArraySlice<String>?) -> JSONValue {
        // Everything below `upper` itself lies after it, and everything below `lower` too.
        if let upper, upper.isEmpty { return .null }
        let lower = lower?.isEmpty == true ? nil : lower
        let (lowerKey, upperKey) = (lower.map { Key($0.first!) }, upper.map { Key($0.first!) })
        var members: [JSONKey: JSONValue] = [:]
        for child in children {
            var childLower: ArraySlice<String>?
            if let lower, let lowerKey {
                let order = child.key.compare(lowerKey)
                if order < 0 { continue }
                childLower = order == 0 ? lower.dropFirst() : nil
            }
            var childUpper: ArraySlice<String>?
            if let upper, let upperKey {
                let order = child.key.compare(upperKey)
                if order > 0 { break }
                childUpper = order == 0 ? upper.dropFirst() : nil
            }
            let part = slice(child.value, after: childLower, upTo: childUpper)
            if case .null = part { continue }
            members[JSONKey(child.key.text)] = part
        }
        return members.isEmpty ? .null : .object(members)
    }

    /// `/a/b` as its keys.
    static func pathKeys(_ text: String) -> [String] {
        text.split(separator: "/").map(String.init)
    }
}
