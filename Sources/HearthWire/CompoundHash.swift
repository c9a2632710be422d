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
public enum CompoundHash {
    /// One leaf of a value: where it is, its v2 text, and its value as the wire writes it.
    struct Leaf {
        var path: [String]
        var image: String
        var value: JSONValue
    }

    /// A range that differs: the client's cut before it (nil: from the start), its cut at
    /// its end (nil: to the end), and the server's data in it (`null` when none).
    public struct Range: Sendable, Equatable {
        public var start: String?
        public var end: String?
        public var value: JSONValue
    }

    /// The ranges of `value` (in export or client form) whose hash is not the client's:
    /// `hashes` has one more entry than `posts` (paths like `/a/b`). Nil when the compound
    /// hash is malformed (the caller then sends the whole value).
    public static func changedRanges(_ value: JSONValue, hashes: [String], posts: [String]) -> [Range]? {
        guard hashes.count == posts.count + 1 else { return nil }
        let cuts = posts.map(pathKeys)
        let (ranges, leaves) = rangeHashes(value, cuts: cuts)
        var changed: [Range] = []
        for index in hashes.indices where ranges[index] != hashes[index] {
            changed.append(Range(start: index == 0 ? nil : posts[index - 1], end: index == posts.count ? nil : posts[index],
                                 value: tree(of: leaves[index])))
        }
        return changed
    }

    /// The v2 hash of each range of `value` cut after the leaf paths `cuts`, with the
    /// leaves of each range.
    static func rangeHashes(_ value: JSONValue, cuts: [[String]]) -> (hashes: [String], leaves: [[Leaf]]) {
        var all: [Leaf] = []
        var path: [String] = []
        visit(value, path: &path, into: &all)
        var rangeOf: [Int] = []
        rangeOf.reserveCapacity(all.count)
        var range = 0
        for leaf in all {
            // Leaves come in path order, so their ranges never go down.
            while range < cuts.count && comparePaths(leaf.path, cuts[range]) > 0 { range += 1 }
            rangeOf.append(range)
        }
        var hashes = [String](repeating: "", count: cuts.count + 1)
        var leaves = [[Leaf]](repeating: [], count: cuts.count + 1)
        var builder = Builder()
        for (index, leaf) in all.enumerated() {
            builder.leaf(leaf)
            leaves[rangeOf[index]].append(leaf)
            if index + 1 == all.count || rangeOf[index + 1] != rangeOf[index] {
                hashes[rangeOf[index]] = SDKHash.base64SHA1(Array(builder.endRange().utf8))
            }
        }
        return (hashes, leaves)
    }

    /// The FCompoundHashBuilder's text, driven leaf by leaf: moving from one leaf to the
    /// next closes the levels the two do not share (`endChild`) and opens the new ones
    /// (`startChild`, which begins a range when none is being built).
    struct Builder {
        private var text: String?
        private var path: [String] = []
        private var needsComma = true

        mutating func leaf(_ leaf: Leaf) {
            var shared = 0
            while shared < path.count, shared < leaf.path.count, path[shared] == leaf.path[shared] { shared += 1 }
            // A leaf's path is never a prefix of the next leaf's, nor the other way round:
            // leave every level not shared, then open the new ones.
            while path.count > shared {
                path.removeLast()
                if text != nil { text! += ")" }
                needsComma = true
            }
            for key in leaf.path[shared...] {
                ensureRange()
                if needsComma { text! += "," }
                text! += quoted(key) + ":("
                path.append(key)
                needsComma = false
            }
            ensureRange()
            text! += leaf.image
            needsComma = true
        }

        /// Ends the range after the current leaf: its text with every open level closed.
        mutating func endRange() -> String {
            var whole = text ?? "("
            whole += String(repeating: ")", count: path.count) + ")"
            text = nil
            return whole
        }

        private mutating func ensureRange() {
            guard text == nil else { return }
            var start = "("
            for key in path { start += quoted(key) + ":(" }
            text = start
            needsComma = false
        }
    }

    /// Depth first, children in key order, `.priority` as the SDK enumerates it. `path`
    /// is where `value` is (restored on return).
    static func visit(_ value: JSONValue, path: inout [String], into leaves: inout [Leaf]) {
        switch value {
        case .null:
            return
        case .bool, .int, .double, .string:
            leaves.append(Leaf(path: path, image: leafImage(value, priority: nil), value: value))
        case .array(let items):
            for (index, item) in items.enumerated() {
                path.append(String(index))
                visit(item, path: &path, into: &leaves)
                path.removeLast()
            }
        case .object(let members):
            let priority = members[".priority"]
            if let leaf = members[".value"], leaf.isLeaf {
                leaves.append(Leaf(path: path, image: leafImage(leaf, priority: priority), value: value))
                return
            }
            // Sorted with each key's integer form parsed once.
            let keys = FirebaseKeyOrder.sorted(members.keys.lazy.map(\.string).filter { $0 != ".priority" && $0 != ".value" })
            var priorityPending = priority.map { $0.isLeaf && $0 != .null } ?? false
            for key in keys {
                guard let child = members[JSONKey(key)] else { continue }
                if priorityPending && FirebaseKeyOrder.compare(key, ".priority") > 0, let priority {
                    priorityPending = false
                    path.append(".priority")
                    leaves.append(Leaf(path: path, image: leafImage(priority, priority: nil), value: priority))
                    path.removeLast()
                }
                path.append(key)
                visit(child, path: &path, into: &leaves)
                path.removeLast()
            }
        }
    }

    /// A leaf's v2 text: `[priority:<priority leaf>:]<type>:<value>`.
    static func leafImage(_ value: JSONValue, priority: JSONValue?) -> String {
        var image = ""
        if let priority, priority.isLeaf, priority != .null {
            image = "priority:" + leafImage(priority, priority: nil) + ":"
        }
        switch value {
        case .bool(let flag): image += "boolean:" + (flag ? "true" : "false")
        case .int(let number): image += "number:" + SDKHash.hex(Double(number))
        case .double(let number): image += "number:" + SDKHash.hex(number)
        case .string(let text): image += "string:" + quoted(text)
        case .null, .array, .object: break
        }
        return image
    }

    /// `"text"` with `\` and `"` escaped by `\` (the SDK's v2 string form).
    static func quoted(_ text: String) -> String {
        if !text.utf8.contains(where: { $0 == UInt8(ascii: "\\") || $0 == UInt8(ascii: "\"") }) {
            return "\"" + text + "\""
        }
        var out = "\""
        for character in text.unicodeScalars {
            if character == "\\" || character == "\"" { out.unicodeScalars.append("\\") }
            out.unicodeScalars.append(character)
        }
        return out + "\""
    }

    /// `/a/b` as its keys.
    static func pathKeys(_ text: String) -> [String] {
        text.split(separator: "/").map(String.init)
    }

    /// Path order (FPath compare): key by key in Firebase key order; a path before every
    /// path below it.
    static func comparePaths(_ a: [String], _ b: [String]) -> Int {
        for (x, y) in zip(a, b) where x != y {
            return FirebaseKeyOrder.compare(x, y)
        }
        return a.count == b.count ? 0 : a.count < b.count ? -1 : 1
    }

    /// The object holding `leaves` at their paths (`null` when there are none).
    static func tree(of leaves: [Leaf]) -> JSONValue {
        guard !leaves.isEmpty else { return .null }
        var root = JSONValue.null
        for leaf in leaves { insert(leaf.value, at: leaf.path[...], into: &root) }
        return root
    }

    private static func insert(_ value: JSONValue, at path: ArraySlice<String>, into node: inout JSONValue) {
        guard let first = path.first else {
            node = value
            return
        }
        var members: [JSONKey: JSONValue] = [:]
        if case .object(let existing) = node { members = existing }
        var child = members[JSONKey(first)] ?? .null
        insert(value, at: path.dropFirst(), into: &child)
        members[JSONKey(first)] = child
        node = .object(members)
    }
}
