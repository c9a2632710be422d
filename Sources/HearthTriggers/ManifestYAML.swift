import HearthJSON

/// A strict reader for the YAML that `firebase-functions` serves at `/__/functions.yaml`
/// (PyYAML's `yaml.dump` of a dictionary), read into a `JSONValue`:
///
/// - block mappings (`key: value`, keys plain or quoted) and block sequences (`- item`,
///   also at the parent key's indentation, as `yaml.dump` writes them);
/// - plain scalars (`null`/`~`/empty, `true`/`false` and PyYAML's `yes`/`no`/`on`/`off`,
///   decimal integers and floats, anything else a string), single- and double-quoted
///   scalars (with their escapes), each possibly folded over several lines;
/// - the empty flow collections `{}` and `[]`; full-line and trailing `#` comments.
///
/// Anything else (tabs in indentation, anchors, aliases, tags, block scalars `|`/`>`,
/// non-empty flow collections, `?` keys, documents markers, duplicate keys) is refused
/// with its line, never guessed at. A manifest whose first non-space byte is `{` is read
/// as JSON instead.
public enum ManifestYAML {
    /// The largest manifest read (bytes); a functions folder's manifest is a few KiB.
    public static let maxBytes = 1 << 20
    /// The deepest nesting of mappings and sequences accepted (the SDK's is 5).
    public static let maxDepth = 32

    /// Why a manifest was refused: the 1-based line (nil: the whole input) and the reason.
    public struct ParseError: Error, Sendable, Equatable, CustomStringConvertible {
        public var line: Int?
        public var reason: String
        public var description: String { (line.map { "line \($0): " } ?? "") + reason }
    }

    public static func parse(_ bytes: [UInt8]) throws(ParseError) -> JSONValue {
        guard bytes.count <= maxBytes else {
            throw ParseError(line: nil, reason: "larger than \(maxBytes) bytes")
        }
        if bytes.first(where: { $0 != 0x20 && $0 != 0x0A && $0 != 0x0D && $0 != 0x09 }) == UInt8(ascii: "{") {
            do {
                return try JSONParser.parse(bytes)
            } catch {
                throw ParseError(line: JSONPositions.line(of: error.offset, in: bytes), reason: "not valid JSON: \(error.debugDescription)")
            }
        }
        guard let text = String(validating: bytes, as: UTF8.self) else {
            throw ParseError(line: nil, reason: "not UTF-8 text")
        }
        var reader = try Reader(text)
        return try reader.document()
    }

    /// One line: its number, the count of leading spaces, and the rest.
    struct Line {
        var number: Int
        var indent: Int
        var text: Substring
        var isBlank: Bool { text.isEmpty || text.first == "#" }
    }

    struct Reader {
        var lines: [Line] = []
        var index = 0

        init(_ text: String) throws(ParseError) {
            // "\r\n" is one Character in Swift: both it and "\n" end a line.
            for (offset, raw) in text.split(omittingEmptySubsequences: false, whereSeparator: { $0 == "\n" || $0 == "\r\n" }).enumerated() {
                var line = raw
                if line.last == "\r" { line = line.dropLast() }
                let body = line.drop(while: { $0 == " " })
                if body.first == "\t" { throw ParseError(line: offset + 1, reason: "a tab in the indentation (YAML indents with spaces)") }
                var trimmed = body
                while let last = trimmed.last, last == " " || last == "\t" { trimmed = trimmed.dropLast() }
                lines.append(Line(number: offset + 1, indent: line.count - body.count, text: trimmed))
            }
        }

        mutating func skipBlank() {
            while index < lines.count, lines[index].isBlank { index += 1 }
        }

        func fail(_ reason: String, at line: Int? = nil) -> ParseError {
            ParseError(line: line ?? (index < lines.count ? lines[index].number : lines.last?.number), reason: reason)
        }

        mutating func document() throws(ParseError) -> JSONValue {
            skipBlank()
            if index < lines.count, lines[index].text == "---" { index += 1; skipBlank() }
            guard index < lines.count else { throw fail("the manifest is empty") }
            guard lines[index].indent == 0 else { throw fail("the top level must not be indented") }
            let value = try node(parentIndent: -1, depth: 1)
            skipBlank()
            if index < lines.count {
                throw fail(lines[index].text.hasPrefix("---") || lines[index].text.hasPrefix("...")
                           ? "more than one document" : "unexpected content (check the indentation)")
            }
            return value
        }

        /// The node starting at the current (non-blank) line, more indented than its parent.
        mutating func node(parentIndent: Int, depth: Int) throws(ParseError) -> JSONValue {
            guard depth <= ManifestYAML.maxDepth else { throw fail("nested deeper than \(ManifestYAML.maxDepth) levels") }
            let line = lines[index]
            if line.text == "-" || line.text.hasPrefix("- ") { return try sequence(indent: line.indent, depth: depth) }
            if try keySplit(line) != nil { return try mapping(indent: line.indent, depth: depth) }
            index += 1
            return try scalar(line.text, line: line.number, parentIndent: parentIndent)
        }

        /// A key line's key and the text after `: ` (empty when the value is on the next lines).
        func keySplit(_ line: Line) throws(ParseError) -> (key: String, rest: Substring)? {
            let text = line.text
            if text == "?" || text.hasPrefix("? ") { throw fail("complex keys (?) are outside the supported YAML", at: line.number) }
            if text.first == "'" || text.first == "\"" {
                var cursor = text.index(after: text.startIndex)
                var closed: Substring.Index?
                while cursor < text.endIndex {
                    if text.first == "\"" && text[cursor] == "\\" {
                        cursor = text.index(after: cursor)
                        if cursor < text.endIndex { cursor = text.index(after: cursor) }
                        continue
                    }
                    if text[cursor] == text.first {
                        let next = text.index(after: cursor)
                        if text.first == "'" && next < text.endIndex && text[next] == "'" { cursor = text.index(after: next); continue }
                        closed = next
                        break
                    }
                    cursor = text.index(after: cursor)
                }
                guard let end = closed, end < text.endIndex, text[end] == ":" else { return nil }
                let after = text[text.index(after: end)...]
                guard after.isEmpty || after.first == " " else { return nil }
                guard case .string(let key) = try quoted(String(text[..<end]), line: line.number) else { return nil }
                return (key, after.drop(while: { $0 == " " }))
            }
            guard let colon = text.firstRange(of: ": ")?.lowerBound ?? (text.hasSuffix(":") ? text.index(before: text.endIndex) : nil) else {
                return nil
            }
            let key = text[..<colon]
            if key.contains(" #") { return nil }
            guard let first = key.first, !"-[]{}&*!|>%@`#,".contains(first) else {
                throw fail("the key \"\(key)\" is outside the supported YAML", at: line.number)
            }
            return (String(key), text[text.index(after: colon)...].drop(while: { $0 == " " }))
        }

        mutating func mapping(indent: Int, depth: Int) throws(ParseError) -> JSONValue {
            var members: [JSONKey: JSONValue] = [:]
            while true {
                skipBlank()
                guard index < lines.count, lines[index].indent >= indent else { break }
                let line = lines[index]
                guard line.indent == indent else { throw fail("unexpected indentation") }
                if line.indent == 0, line.text == "---" || line.text.hasPrefix("--- ") || line.text == "..." { throw fail("more than one document") }
                guard let (key, rest) = try keySplit(line) else {
                    throw fail(line.text == "-" || line.text.hasPrefix("- ") ? "a sequence item where a key was expected" : "expected \"key: value\"")
                }
                guard members[JSONKey(key)] == nil else { throw fail("the key \"\(key)\" appears twice") }
                index += 1
                let value: JSONValue
                if rest.isEmpty {
                    skipBlank()
                    if index < lines.count, lines[index].indent > indent {
                        value = try node(parentIndent: indent, depth: depth + 1)
                    } else if index < lines.count, lines[index].indent == indent, lines[index].text == "-" || lines[index].text.hasPrefix("- ") {
                        value = try sequence(indent: indent, depth: depth + 1)
                    } else {
                        value = .null
                    }
                } else {
                    value = try scalar(rest, line: line.number, parentIndent: indent)
                }
                members[JSONKey(key)] = value
            }
            return .object(members)
        }

        mutating func sequence(indent: Int, depth: Int) throws(ParseError) -> JSONValue {
            guard depth <= ManifestYAML.maxDepth else { throw fail("nested deeper than \(ManifestYAML.maxDepth) levels") }
            var items: [JSONValue] = []
            while true {
                skipBlank()
                guard index < lines.count, lines[index].indent == indent,
                      lines[index].text == "-" || lines[index].text.hasPrefix("- ") else { break }
                let line = lines[index]
                let rest = line.text.dropFirst().drop(while: { $0 == " " })
                if rest.isEmpty {
                    index += 1
                    skipBlank()
                    if index < lines.count, lines[index].indent > indent {
                        items.append(try node(parentIndent: indent, depth: depth + 1))
                    } else {
                        items.append(.null)
                    }
                } else {
                    // The item's content reads as a line of its own at its column.
                    lines[index] = Line(number: line.number, indent: line.indent + line.text.count - rest.count, text: rest)
                    items.append(try node(parentIndent: indent, depth: depth + 1))
                }
            }
            if index < lines.count, !lines[index].isBlank, lines[index].indent > indent { throw fail("unexpected indentation") }
            return .array(items)
        }

        /// An inline value and the lines it continues on (those more indented than its parent).
        mutating func scalar(_ first: Substring, line: Int, parentIndent: Int) throws(ParseError) -> JSONValue {
            guard let head = first.first else { return .null }
            switch head {
            case "&", "*": throw fail("anchors and aliases are outside the supported YAML", at: line)
            case "!": throw fail("tags (\(first.prefix(while: { $0 != " " }))) are outside the supported YAML", at: line)
            case "|", ">": throw fail("block scalars (| and >) are outside the supported YAML", at: line)
            case "%", "@", "`": throw fail("a value may not start with \(head)", at: line)
            case "{", "[":
                let compact = first.filter { $0 != " " }
                if compact == "{}" { return JSONValue.object([JSONKey: JSONValue]()) }
                if compact == "[]" { return .array([]) }
                throw fail("flow collections other than {} and [] are outside the supported YAML", at: line)
            default: break
            }
            // Gather the continuation lines; a blank line among them is a line break.
            var parts = [String(first)]
            while index < lines.count {
                let next = lines[index]
                if next.text.isEmpty {
                    // The whole run of blank lines at once: each blank line is looked at once.
                    var end = index
                    while end < lines.count, lines[end].text.isEmpty { end += 1 }
                    guard end < lines.count, lines[end].indent > parentIndent, lines[end].text.first != "#" else { break }
                    parts.append(contentsOf: repeatElement("\n", count: end - index))
                    index = end
                    continue
                }
                guard next.indent > parentIndent, next.text.first != "#" else { break }
                if head != "'" && head != "\"" && (next.text.hasPrefix("- ") || (try? keySplit(next)) != nil) {
                    throw fail("unexpected indentation", at: next.number)
                }
                parts.append(String(next.text))
                index += 1
            }
            var folded = ""
            for (position, part) in parts.enumerated() {
                if part == "\n" { folded += "\n"; continue }
                if position > 0, parts[position - 1] != "\n" {
                    // In a double-quoted value a \ at the end of a line joins the lines without a space.
                    if head == "\"" && folded.hasSuffix("\\") { folded.removeLast() } else { folded += " " }
                }
                folded += part
            }
            if folded.hasSuffix("\n") { throw fail("unexpected blank line in a value", at: line) }
            if head == "'" || head == "\"" { return try quoted(folded, line: line) }
            return try plain(folded, line: line)
        }

        /// YAML's one-character escapes in double-quoted scalars (`\x`, `\u`, `\U` take hex digits).
        static let escapes: [Character: Character] = [
            "\\": "\\", "\"": "\"", "/": "/", " ": " ", "\t": "\t", "t": "\t", "n": "\n", "r": "\r", "0": "\0",
            "a": "\u{07}", "b": "\u{08}", "e": "\u{1B}", "f": "\u{0C}", "v": "\u{0B}",
            "N": "\u{85}", "_": "\u{A0}", "L": "\u{2028}", "P": "\u{2029}",
        ]

        /// A quoted scalar (its quotes included), then at most a comment.
        func quoted(_ text: String, line: Int) throws(ParseError) -> JSONValue {
            let quote = text.first!
            var out = ""
            var characters = text.dropFirst()[...]
            var closed = false
            while let character = characters.popFirst() {
                if character == quote {
                    if quote == "'" && characters.first == "'" { characters.removeFirst(); out.append("'"); continue }
                    closed = true
                    break
                }
                if quote == "\"" && character == "\\" {
                    guard let escape = characters.popFirst() else { throw fail("a \\ at the end of a quoted value", at: line) }
                    if let simple = Self.escapes[escape] {
                        out.append(simple)
                        continue
                    }
                    switch escape {
                    case "x", "u", "U":
                        let count = escape == "x" ? 2 : escape == "u" ? 4 : 8
                        let digits = String(characters.prefix(count))
                        guard digits.count == count, let code = UInt32(digits, radix: 16), let scalar = Unicode.Scalar(code) else {
                            throw fail("a bad \\\(escape) escape in a quoted value", at: line)
                        }
                        characters = characters.dropFirst(count)
                        out.unicodeScalars.append(scalar)
                    default:
                        throw fail("an unknown escape \\\(escape) in a quoted value", at: line)
                    }
                    continue
                }
                out.append(character)
            }
            guard closed else { throw fail("a quoted value is not closed", at: line) }
            let after = characters.drop(while: { $0 == " " })
            guard after.isEmpty || (after.first == "#" && characters.first == " ") else {
                throw fail("unexpected text after a quoted value", at: line)
            }
            return .string(out)
        }

        /// A plain scalar, typed as PyYAML resolves it (null, bool, int, float, else a string).
        func plain(_ raw: String, line: Int) throws(ParseError) -> JSONValue {
            var text = Substring(raw)
            if let comment = text.firstRange(of: " #") { text = text[..<comment.lowerBound] }
            while text.last == " " { text = text.dropLast() }
            if text.contains(": ") || text.hasSuffix(":") { throw fail("a value holding \": \" must be quoted", at: line) }
            switch text {
            case "", "~", "null", "Null", "NULL": return .null
            case "true", "True", "TRUE", "yes", "Yes", "YES", "on", "On", "ON": return .bool(true)
            case "false", "False", "FALSE", "no", "No", "NO", "off", "Off", "OFF": return .bool(false)
            default: break
            }
            let digits = text.first == "-" || text.first == "+" ? text.dropFirst() : text
            if !digits.isEmpty, digits.allSatisfy(\.isASCIIDigit) {
                guard digits == "0" || digits.first != "0" else { throw fail("a number with a leading zero must be quoted", at: line) }
                guard let value = Int64(text.first == "+" ? String(digits) : String(text)) else { throw fail("the integer \(text) is out of range", at: line) }
                return .int(value)
            }
            if digits.contains("."), digits.first != ".", digits.allSatisfy({ $0.isASCIIDigit || $0 == "." || $0 == "e" || $0 == "E" || $0 == "-" || $0 == "+" }),
               let value = Double(String(text)), value.isFinite {
                return .double(value)
            }
            return .string(String(text))
        }
    }
}

private extension Character {
    var isASCIIDigit: Bool { isASCII && isNumber }
}
