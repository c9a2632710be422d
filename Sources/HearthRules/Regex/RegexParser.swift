/// Parses the pattern of a `matches()` regular expression literal into a `RegexNode`,
/// enforcing Firebase's restrictions (docs/protocol/rules.md §3.5, §3.6): `^` only first
/// and `$` only last, no anchors combined with alternation, no empty alternatives. Features
/// outside the subset (backreferences, lookaround, word boundaries) are rejected rather
/// than guessed at.
struct RegexParser {
    /// Largest count allowed in `{n}`, `{n,}` or `{n,m}` (RE2's limit).
    static let maxRepeatCount = 1000

    private let scalars: [Unicode.Scalar]
    /// Byte offset of each scalar in the pattern, plus one entry for the end.
    private let offsets: [Int]
    private var index = 0
    private let end: Int
    /// The pattern has a `|` outside any group (`/a|b/`, not `/(a|b)/`).
    private var topLevelAlternation = false

    struct Parsed {
        let node: RegexNode
        let anchoredStart: Bool
        let anchoredEnd: Bool
    }

    private init(pattern: String) {
        var scalars: [Unicode.Scalar] = []
        var offsets: [Int] = []
        var offset = 0
        for scalar in pattern.unicodeScalars {
            scalars.append(scalar)
            offsets.append(offset)
            offset += UTF8.width(scalar)
        }
        offsets.append(offset)
        self.scalars = scalars
        self.offsets = offsets
        self.end = scalars.count
    }

    static func parse(_ pattern: String) throws(RegexError) -> Parsed {
        var parser = RegexParser(pattern: pattern)
        var start = 0
        var stop = parser.scalars.count
        let anchoredStart = stop > 0 && parser.scalars[0] == "^"
        if anchoredStart { start = 1 }
        var anchoredEnd = false
        if stop > start && parser.scalars[stop - 1] == "$" {
            var backslashes = 0
            var probe = stop - 2
            while probe >= start && parser.scalars[probe] == "\\" {
                backslashes += 1
                probe -= 1
            }
            if backslashes % 2 == 0 {
                anchoredEnd = true
                stop -= 1
            }
        }
        parser.index = start
        parser = RegexParser(copying: parser, end: stop)
        let node = try parser.parseAlternation(depth: 0)
        if parser.index < parser.end {
            throw parser.error("unmatched ')'")
        }
        if (anchoredStart || anchoredEnd) && parser.topLevelAlternation {
            throw RegexError(offset: 0, message: "^ and $ cannot be combined with a top-level '|'; group the alternatives, as in /^(a|b)$/")
        }
        return Parsed(node: node, anchoredStart: anchoredStart, anchoredEnd: anchoredEnd)
    }

    private init(copying other: RegexParser, end: Int) {
        scalars = other.scalars
        offsets = other.offsets
        index = other.index
        self.end = end
    }

    private func error(_ message: String, at position: Int? = nil) -> RegexError {
        RegexError(offset: offsets[min(position ?? index, offsets.count - 1)], message: message)
    }

    private var current: Unicode.Scalar? { index < end ? scalars[index] : nil }

    // MARK: - Structure

    private mutating func parseAlternation(depth: Int) throws(RegexError) -> RegexNode {
        guard depth < 64 else { throw error("regular expression nested too deeply") }
        var branches: [RegexNode] = []
        var branchStart = index
        while true {
            let branch = try parseConcatenation(depth: depth)
            branches.append(branch)
            if current == "|" {
                if branch == .empty { throw error("empty alternative in a regular expression", at: branchStart) }
                index += 1
                branchStart = index
                continue
            }
            if branches.count > 1 && branch == .empty {
                throw error("empty alternative in a regular expression", at: branchStart)
            }
            if depth == 0 && branches.count > 1 { topLevelAlternation = true }
            return branches.count == 1 ? branch : .alternate(branches)
        }
    }

    private mutating func parseConcatenation(depth: Int) throws(RegexError) -> RegexNode {
        var items: [RegexNode] = []
        while let scalar = current, scalar != "|", scalar != ")" {
            let atomStart = index
            let atom = try parseAtom(depth: depth)
            items.append(try parseQuantifiers(atom, atomStart: atomStart))
        }
        switch items.count {
        case 0: return .empty
        case 1: return items[0]
        default: return .concat(items)
        }
    }

    private mutating func parseQuantifiers(_ atom: RegexNode, atomStart: Int) throws(RegexError) -> RegexNode {
        guard let scalar = current else { return atom }
        let bounds: (Int, Int?)
        switch scalar {
        case "*": bounds = (0, nil); index += 1
        case "+": bounds = (1, nil); index += 1
        case "?": bounds = (0, 1); index += 1
        case "{":
            guard let counted = try parseCount() else { throw error("unescaped '{'; write \\{ for a literal brace") }
            bounds = counted
        default:
            return atom
        }
        if current == "?" { index += 1 }  // lazy: irrelevant for a yes/no match
        if let next = current, next == "*" || next == "+" || next == "?" || next == "{" {
            throw error("nothing to repeat")
        }
        return .repetition(atom, min: bounds.0, max: bounds.1)
    }

    /// `{n}`, `{n,}` or `{n,m}` at `index`; nil if the brace does not start a count.
    private mutating func parseCount() throws(RegexError) -> (Int, Int?)? {
        let start = index
        index += 1
        guard let low = parseDecimal() else {
            index = start
            return nil
        }
        var high: Int? = low
        if current == "," {
            index += 1
            high = parseDecimal()
        }
        guard current == "}" else {
            index = start
            return nil
        }
        index += 1
        if low > Self.maxRepeatCount || (high ?? 0) > Self.maxRepeatCount {
            throw error("repetition count above \(Self.maxRepeatCount)", at: start)
        }
        if let high, high < low {
            throw error("repetition range out of order", at: start)
        }
        return (low, high)
    }

    private mutating func parseDecimal() -> Int? {
        var value = 0
        var digits = 0
        while let scalar = current, ("0"..."9").contains(scalar) {
            value = min(value * 10 + Int(scalar.value - 0x30), 1_000_000)
            digits += 1
            index += 1
        }
        return digits > 0 ? value : nil
    }

    private mutating func parseAtom(depth: Int) throws(RegexError) -> RegexNode {
        let scalar = scalars[index]
        switch scalar {
        case "(":
            let open = index
            index += 1
            if current == "?" {
                if index + 1 < end, scalars[index + 1] == ":" {
                    index += 2
                } else {
                    throw error("lookaround and named groups are not supported", at: open)
                }
            }
            let inner = try parseAlternation(depth: depth + 1)
            guard current == ")" else { throw error("missing ')'", at: open) }
            index += 1
            if inner == .empty { throw error("empty group in a regular expression", at: open) }
            return inner
        case ")":
            throw error("unmatched ')'")
        case "*", "+", "?":
            throw error("nothing to repeat")
        case "{":
            if let _ = try parseCount() { throw error("nothing to repeat") }
            throw error("unescaped '{'; write \\{ for a literal brace")
        case "^", "$":
            throw error("anchors ^ and $ are only allowed at the very start and end of the pattern")
        case ".":
            index += 1
            return .anyExceptLineTerminator
        case "[":
            return try parseClass()
        case "\\":
            return try parseEscape()
        default:
            index += 1
            return .scalar(scalar.value)
        }
    }

    // MARK: - Escapes and classes

    private enum Escaped {
        case scalar(UInt32)
        case set(ScalarSet)
    }

    private mutating func parseEscape() throws(RegexError) -> RegexNode {
        switch try parseEscapeBody(inClass: false) {
        case .scalar(let value): return .scalar(value)
        case .set(let set): return .set(set, negated: false)
        }
    }

    /// Reads `\x` at `index` (the backslash).
    private mutating func parseEscapeBody(inClass: Bool) throws(RegexError) -> Escaped {
        let start = index
        index += 1
        guard let scalar = current else { throw error("pattern ends with a lone backslash", at: start) }
        index += 1
        switch scalar {
        case "d": return .set(.digits)
        case "D": return .set(ScalarSet.digits.inverted)
        case "w": return .set(.word)
        case "W": return .set(ScalarSet.word.inverted)
        case "s": return .set(.space)
        case "S": return .set(ScalarSet.space.inverted)
        case "n": return .scalar(0x0A)
        case "r": return .scalar(0x0D)
        case "t": return .scalar(0x09)
        case "f": return .scalar(0x0C)
        case "v": return .scalar(0x0B)
        case "b":
            if inClass { return .scalar(0x08) }
            throw error("word boundaries (\\b) are not supported", at: start)
        case "0":
            if let next = current, ("0"..."9").contains(next) { throw error("octal escapes are not supported", at: start) }
            return .scalar(0)
        case "x":
            return .scalar(try parseHex(digits: 2, escapeStart: start))
        case "u":
            return .scalar(try parseHex(digits: 4, escapeStart: start))
        default:
            if ("1"..."9").contains(scalar) { throw error("backreferences are not supported", at: start) }
            if scalar.isASCII && (scalar.properties.isAlphabetic || ("0"..."9").contains(scalar)) {
                throw error("unsupported escape \\\(scalar)", at: start)
            }
            return .scalar(scalar.value)
        }
    }

    private mutating func parseHex(digits: Int, escapeStart: Int) throws(RegexError) -> UInt32 {
        var value: UInt32 = 0
        for _ in 0..<digits {
            guard let scalar = current, let digit = Self.hexValue(scalar) else {
                throw error("malformed hexadecimal escape", at: escapeStart)
            }
            value = value * 16 + digit
            index += 1
        }
        return value
    }

    private static func hexValue(_ scalar: Unicode.Scalar) -> UInt32? {
        switch scalar {
        case "0"..."9": return scalar.value - 0x30
        case "a"..."f": return scalar.value - 0x61 + 10
        case "A"..."F": return scalar.value - 0x41 + 10
        default: return nil
        }
    }

    private mutating func parseClass() throws(RegexError) -> RegexNode {
        let open = index
        index += 1
        var negated = false
        if current == "^" {
            negated = true
            index += 1
        }
        if current == "]" { throw error("empty character class", at: open) }
        var set = ScalarSet()
        while true {
            guard let scalar = current else { throw error("missing ']'", at: open) }
            if scalar == "]" {
                index += 1
                return .set(set, negated: negated)
            }
            let itemStart = index
            let low = try parseClassItem()
            // A range "a-z"; a '-' first, last or after a range is literal.
            if current == "-", index + 1 < end, scalars[index + 1] != "]" {
                index += 1
                let high = try parseClassItem()
                guard case .scalar(let lowValue) = low, case .scalar(let highValue) = high else {
                    throw error("a class escape cannot bound a range", at: itemStart)
                }
                guard lowValue <= highValue else { throw error("character range out of order", at: itemStart) }
                set.insert(lowValue...highValue)
                continue
            }
            switch low {
            case .scalar(let value): set.insert(value...value)
            case .set(let members): set.formUnion(members)
            }
        }
    }

    private mutating func parseClassItem() throws(RegexError) -> Escaped {
        guard let scalar = current else { throw error("missing ']'") }
        if scalar == "\\" { return try parseEscapeBody(inClass: true) }
        index += 1
        return .scalar(scalar.value)
    }
}
