import HearthJSON

extension CompoundHash {
    /// One walk over a value that hashes each range as it ends: the FCompoundHashBuilder's
    /// text, streamed into one reused byte buffer. Like the builder it is lazy: leaving a
    /// node closes nothing until the next leaf (which closes the levels it does not share
    /// with the last one, then opens its own) or the end of the range (which closes all).
    ///
    /// Which range a leaf is in comes from its path's order against the next cut, kept per
    /// level as the walk descends (one key comparison per child whose parent's path is a
    /// prefix of the cut), and recomputed only when a leaf passes the cut.
    struct RangeHasher {
        let cuts: [[Key]]
        /// Each range's hash ("" when it holds no leaf).
        private(set) var hashes: [String]
        /// Each range's top-level children (indices into the walk's order) that hold its
        /// leaves; nil when it holds none (or the value is one leaf).
        private(set) var spans: [ClosedRange<Int>?]

        /// The range of the last leaf (while the walk is before its first: 0).
        private var range = 0
        private var sawLeaf = false
        /// The walk's path, and per level how it compares with `cuts[range]` so far: -1 or
        /// 1 once decided, 0 while it is a prefix of the cut.
        private var path: [Key] = []
        private var order: [Int8] = []
        /// The top-level child being walked.
        private var topIndex = 0
        /// The builder's open levels: the first `open` keys of the last leaf's path; the
        /// walk has since been no higher than `lowest` levels deep.
        private var open = 0
        private var lowest = 0
        /// The text of the range being built (`building`), and whether a comma is due.
        private var text: [UInt8] = []
        private var building = false
        private var needsComma = false

        init(cuts: [[String]]) {
            self.cuts = cuts.map { $0.map(Key.init) }
            self.hashes = [String](repeating: "", count: cuts.count + 1)
            self.spans = [ClosedRange<Int>?](repeating: nil, count: cuts.count + 1)
        }

        /// Hashes every range of `value`, whose `children(of:)` are `top`, each node and
        /// each cut level compared a unit of `work`; stops early once it is exhausted.
        mutating func walk(_ value: JSONValue, top: [Child], work: inout Work) {
            if isLeafNode(value) {
                visit(value, work: &work)
            } else {
                for (index, child) in top.enumerated() {
                    if work.exhausted { return }
                    topIndex = index
                    push(child.key)
                    visit(child.value, work: &work)
                    pop()
                }
            }
            if sawLeaf { endRange() }
        }

        private mutating func visit(_ value: JSONValue, work: inout Work) {
            work.spend(1)
            switch value {
            case .null:
                return
            case .bool, .int, .double, .string:
                leaf(value, priority: nil, work: &work)
            case .array:
                visit(children(of: value, work: &work), work: &work)
            case .object(let members):
                guard let children = children(of: members, work: &work) else {
                    return leaf(members[".value"]!, priority: members[".priority"], work: &work)
                }
                visit(children, work: &work)
            }
        }

        private mutating func visit(_ children: [Child], work: inout Work) {
            for child in children {
                if work.exhausted { return }
                push(child.key)
                visit(child.value, work: &work)
                pop()
            }
        }

        private mutating func push(_ key: Key) {
            path.append(key)
            order.append(orderAt(path.count - 1))
        }

        private mutating func pop() {
            path.removeLast()
            order.removeLast()
            lowest = min(lowest, path.count)
        }

        /// How the path up to level `depth` compares with the next cut (its parents' order
        /// already known).
        private func orderAt(_ depth: Int) -> Int8 {
            let parent = depth == 0 ? 0 : order[depth - 1]
            guard parent == 0, range < cuts.count else { return parent }
            let cut = cuts[range]
            // Below the cut itself: after it.
            guard depth < cut.count else { return 1 }
            return Int8(path[depth].compare(cut[depth]))
        }

        /// How the leaf at `path` compares with the next cut.
        private var leafOrder: Int8 {
            let decided = order.last ?? 0
            if decided != 0 { return decided }
            return path.count == cuts[range].count ? 0 : -1
        }

        private mutating func leaf(_ value: JSONValue, priority: JSONValue?, work: inout Work) {
            let previous = range
            while range < cuts.count && leafOrder > 0 {
                range += 1
                work.spend(order.count)
                for depth in order.indices { order[depth] = orderAt(depth) }
            }
            if sawLeaf && range != previous { endRange(previous) }
            sawLeaf = true
            if !path.isEmpty {
                let span = spans[range]
                spans[range] = (span?.lowerBound ?? topIndex)...topIndex
            }
            // Close the levels the last leaf does not share with this one, open this one's.
            let shared = min(open, lowest)
            if open > shared {
                if building { text.append(contentsOf: repeatElement(UInt8(ascii: ")"), count: open - shared)) }
                needsComma = true
                open = shared
            }
            while open < path.count {
                beginRange()
                if needsComma { text.append(UInt8(ascii: ",")) }
                appendQuoted(path[open].text)
                text.append(UInt8(ascii: ":"))
                text.append(UInt8(ascii: "("))
                open += 1
                needsComma = false
            }
            beginRange()
            appendLeaf(value, priority: priority)
            needsComma = true
            lowest = path.count
        }

        /// Starts a range's text (once): `(` and the levels it starts inside of.
        private mutating func beginRange() {
            guard !building else { return }
            building = true
            text.removeAll(keepingCapacity: true)
            text.append(UInt8(ascii: "("))
            for key in path[..<open] {
                appendQuoted(key.text)
                text.append(UInt8(ascii: ":"))
                text.append(UInt8(ascii: "("))
            }
            needsComma = false
        }

        /// Ends range `index` (by default the last leaf's) after its last leaf: its text
        /// with every open level closed, hashed.
        private mutating func endRange(_ index: Int? = nil) {
            if !building {
                text.removeAll(keepingCapacity: true)
                text.append(UInt8(ascii: "("))
            }
            text.append(contentsOf: repeatElement(UInt8(ascii: ")"), count: open + 1))
            hashes[index ?? range] = SDKHash.base64SHA1(text)
            building = false
        }

        /// A leaf's v2 text: `[priority:<priority leaf>:]<type>:<value>`.
        private mutating func appendLeaf(_ value: JSONValue, priority: JSONValue?) {
            if let priority, priority.isLeaf {
                text.append(contentsOf: "priority:".utf8)
                appendLeaf(priority, priority: nil)
                text.append(UInt8(ascii: ":"))
            }
            switch value {
            case .bool(let flag): text.append(contentsOf: flag ? "boolean:true".utf8 : "boolean:false".utf8)
            case .int(let number): appendNumber(Double(number))
            case .double(let number): appendNumber(number)
            case .string(let string):
                text.append(contentsOf: "string:".utf8)
                appendQuoted(string)
            case .null, .array, .object: break
            }
        }

        /// `number:` and the 16 lowercase hex digits of the double's bits.
        private mutating func appendNumber(_ number: Double) {
            text.append(contentsOf: "number:".utf8)
            let bits = number.bitPattern
            withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 16) { digits in
                for place in 0..<16 {
                    let nibble = UInt8(truncatingIfNeeded: bits >> UInt64(60 - 4 * place)) & 0xF
                    digits[place] = nibble < 10 ? UInt8(ascii: "0") + nibble : UInt8(ascii: "a") + nibble - 10
                }
                text.append(contentsOf: digits)
            }
        }

        /// `"text"` with `\` and `"` escaped by `\` (the SDK's v2 string form).
        private mutating func appendQuoted(_ string: String) {
            text.append(UInt8(ascii: "\""))
            if !string.utf8.contains(where: { $0 == UInt8(ascii: "\\") || $0 == UInt8(ascii: "\"") }) {
                text.append(contentsOf: string.utf8)
                return text.append(UInt8(ascii: "\""))
            }
            for byte in string.utf8 {
                if byte == UInt8(ascii: "\\") || byte == UInt8(ascii: "\"") { text.append(UInt8(ascii: "\\")) }
                text.append(byte)
            }
            text.append(UInt8(ascii: "\""))
        }
    }
}
