import HearthJSON

/// Compound hashes (docs/protocol/wire.md §4.2, §3.3): the iOS and Android SDKs re-listen
/// to a cached location with `ch: {hs: [h1…hn], ps: [p1…p(n-1)]}`, their cache cut into n
/// ranges at the leaf paths `ps` (relative to the listen), each hashed with the SDKs' "v2"
/// string form. The server hashes its own value over the same ranges and answers with a
/// range merge (`rm`) of only those that differ, instead of the whole value.
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
/// only the ranges that differ are then cut out of the value (`Slicer`), each found by
/// binary search in children sorted once. An answer costs O(n log n) in the value's n
/// nodes whatever the cuts; it is bounded by `maxCutPaths` and `workBudget`, past which the
/// caller sends the whole value (the answer runs on the fan-out queue other clients'
/// pushes wait for).
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

    /// The most cut points (`ps`) a compound hash may carry. The SDKs cut their cache by
    /// size into a few dozen ranges; 1,024 leaves room for caches far larger than they
    /// build. A compound hash with more is not used: the listen gets the whole value, which
    /// a real client applies as it would any listen's first event, so it keeps working.
    public static let maxCutPaths = 1_024

    /// The most work (`Work` units: nodes visited, key comparisons, cut levels compared) an
    /// answer may take before it is given up and the whole value sent instead. The answer
    /// runs on the namespace's fan-out queue, which other clients' pushes wait for; this
    /// caps that wait at about what sending a value of ~400,000 leaves costs in any case
    /// (a larger value gets the whole value, which is always correct).
    public static let workBudget = 8_000_000

    /// Work counted in units (a node visited, a key compared), against a limit: counted,
    /// not timed, so the bound is the same on every machine and in every test.
    struct Work {
        let limit: Int
        private(set) var spent = 0

        init(limit: Int) { self.limit = limit }

        var exhausted: Bool { spent > limit }

        mutating func spend(_ units: Int) { spent &+= units }
    }

    /// The ranges of `value` (in export or client form) whose hash is not the client's:
    /// `hashes` has one more entry than `posts` (paths like `/a/b`). Nil when the compound
    /// hash is malformed, has more than `maxCutPaths` cuts or cuts out of order, or the
    /// answer would take more than `workBudget`: the caller then sends the whole value.
    public static func changedRanges(_ value: JSONValue, hashes: [String], posts: [String]) -> [Range]? {
        guard posts.count <= maxCutPaths else { return nil }
        var work = Work(limit: workBudget)
        return changedRanges(value, hashes: hashes, posts: posts, work: &work)
    }

    /// `changedRanges` with any number of cuts, counting its work in `work` (nil once it
    /// is exhausted). Costs O(n log n) in the value's n nodes plus O(depth) per cut,
    /// whatever the cuts: each object's children are sorted once (those on a cut's path
    /// kept for every range that meets it), and a range finds its first and last child by
    /// binary search.
    static func changedRanges(_ value: JSONValue, hashes: [String], posts: [String], work: inout Work) -> [Range]? {
        guard hashes.count == posts.count + 1 else { return nil }
        let cuts = posts.map(pathKeys)
        // The SDK's cuts are leaf paths in walk order; out of order, ranges would overlap
        // and each could hold most of the value.
        guard ascending(cuts, work: &work) else { return nil }
        let top = children(of: value, work: &work)
        var hasher = RangeHasher(cuts: cuts)
        hasher.walk(value, top: top, work: &work)
        if work.exhausted { return nil }
        var slicer = Slicer(root: value, top: top)
        var changed: [Range] = []
        for index in hashes.indices where hasher.hashes[index] != hashes[index] {
            let lower = index == 0 ? nil : cuts[index - 1][...]
            let upper = index == posts.count ? nil : cuts[index][...]
            let data = isLeafNode(value) || hasher.spans[index] != nil ? slicer.slice(after: lower, upTo: upper, work: &work) : .null
            if work.exhausted { return nil }
            changed.append(Range(start: index == 0 ? nil : posts[index - 1], end: index == posts.count ? nil : posts[index],
                                 value: data))
        }
        return changed
    }

    /// True when each cut is after the one before it in walk order (a path before the
    /// paths below it, children in key order).
    static func ascending(_ cuts: [[String]], work: inout Work) -> Bool {
        for index in cuts.indices.dropFirst() {
            let (previous, cut) = (cuts[index - 1], cuts[index])
            var order = 0
            for (a, b) in zip(previous, cut) {
                work.spend(1)
                order = Key(a).compare(Key(b))
                if order != 0 { break }
            }
            if order == 0 { order = previous.count < cut.count ? -1 : 0 }
            if order >= 0 { return false }
        }
        return true
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
    static func children(of value: JSONValue, work: inout Work) -> [Child] {
        switch value {
        case .null, .bool, .int, .double, .string:
            return []
        case .array(let items):
            work.spend(items.count)
            return items.enumerated().map { Child(key: Key(index: $0.offset), value: $0.element) }
        case .object(let members):
            return children(of: members, work: &work) ?? []
        }
    }

    /// `children(of:)` of an object, in one pass over its members; nil when it is a leaf
    /// (`.value` holds one). Sorts member indices (plain integers), as JSONWriter does;
    /// each member and each comparison is a unit of `work`.
    static func children(of members: [JSONKey: JSONValue], work: inout Work) -> [Child]? {
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
        work.spend(members.count)
        var comparisons = 0
        order.sort { a, b in
            comparisons += 1
            return FirebaseKeyOrder.compare(members.keys[a.index].string, a.int, members.keys[b.index].string, b.int) < 0
        }
        work.spend(comparisons)
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

    /// Cuts ranges out of one value. The children of the nodes on the cuts' paths (where
    /// ranges begin and end) are sorted once and kept, so ranges that meet the same node
    /// (many cuts under one child) do not sort it again; the children a range holds whole
    /// are sorted as they are copied, and each is in one range only (the cuts ascend).
    struct Slicer {
        let root: JSONValue
        /// The sorted children of nodes on a cut's path, by the node's path.
        private var sorted: [[String]: [Child]]

        init(root: JSONValue, top: [Child]) {
            self.root = root
            self.sorted = [[]: top]
        }

        /// The part of the value whose leaves lie after the relative path `lower` (nil: no
        /// bound) and up to and including `upper` (nil: no bound), as an object keyed like
        /// the value (arrays become objects keyed by index); `null` when no leaf is in it.
        mutating func slice(after lower: ArraySlice<String>?, upTo upper: ArraySlice<String>?, work: inout Work) -> JSONValue {
            slice(root, at: [], after: lower, upTo: upper, work: &work)
        }

        /// `slice` of the node `value` at `path`, the bounds relative to it.
        private mutating func slice(_ value: JSONValue, at path: [String], after lower: ArraySlice<String>?,
                                    upTo upper: ArraySlice<String>?, work: inout Work) -> JSONValue {
            work.spend(1)
            // A leaf's path is a prefix of (or is) any bound it meets: before `lower`, within `upper`.
            if isLeafNode(value) { return lower == nil ? value : .null }
            // Everything below `upper` itself lies after it, and everything below `lower` too.
            if let upper, upper.isEmpty { return .null }
            let lower = lower?.isEmpty == true ? nil : lower
            if lower == nil && upper == nil { return whole(value, work: &work) }
            let children: [Child]
            if let known = sorted[path] {
                children = known
            } else {
                children = CompoundHash.children(of: value, work: &work)
                sorted[path] = children
            }
            let (lowerKey, upperKey) = (lower.map { Key($0.first!) }, upper.map { Key($0.first!) })
            // The first child not before `lower`'s key, the first after `upper`'s.
            let first = lowerKey.map { key in boundary(children, work: &work) { $0.compare(key) < 0 } } ?? 0
            let end = upperKey.map { key in boundary(children, work: &work) { $0.compare(key) <= 0 } } ?? children.count
            var members: [JSONKey: JSONValue] = [:]
            for child in children[first..<max(first, end)] {
                let childLower = lowerKey.map { child.key.compare($0) } == 0 ? lower?.dropFirst() : nil
                let childUpper = upperKey.map { child.key.compare($0) } == 0 ? upper?.dropFirst() : nil
                let part = childLower == nil && childUpper == nil
                    ? whole(child.value, work: &work)
                    : slice(child.value, at: path + [child.key.text], after: childLower, upTo: childUpper, work: &work)
                if case .null = part { continue }
                members[JSONKey(child.key.text)] = part
            }
            return members.isEmpty ? .null : .object(members)
        }

        /// The index of the first child for which `before` is false (`before` holds for a
        /// prefix of the children, which are sorted).
        private func boundary(_ children: [Child], work: inout Work, _ before: (Key) -> Bool) -> Int {
            var (low, high) = (0, children.count)
            while low < high {
                work.spend(1)
                let middle = (low + high) / 2
                if before(children[middle].key) { low = middle + 1 } else { high = middle }
            }
            return low
        }

        /// All of `value`'s leaves, in the slice's form: leaves as they are, arrays as
        /// objects keyed by index, no `.value` beside children, a `.priority` only where
        /// the walk visits it; `null` when it holds no leaf.
        private func whole(_ value: JSONValue, work: inout Work) -> JSONValue {
            work.spend(1)
            if isLeafNode(value) { return value }
            var members: [JSONKey: JSONValue] = [:]
            for child in CompoundHash.children(of: value, work: &work) {
                let part = whole(child.value, work: &work)
                if case .null = part { continue }
                members[JSONKey(child.key.text)] = part
            }
            return members.isEmpty ? .null : .object(members)
        }
    }

    /// `/a/b` as its keys.
    static func pathKeys(_ text: String) -> [String] {
        text.split(separator: "/").map(String.init)
    }
}
