import HearthJSON

/// A database reference pattern in Firebase's syntax (Eventarc path patterns, as
/// `firebase-functions`' `PathPattern` reads them): `/users/{uid}/favorites/{favId}`.
///
/// - `{name}` and `{name=*}`: one segment, captured as `name`;
/// - `{name=**}`: any number of segments (zero or more [U]), captured slash-joined;
/// - `*`: one segment, not captured; `**`: any number, not captured;
/// - anything else: that exact key.
///
/// At most one multi-segment wildcard per pattern (Eventarc's rule), so matching is linear.
public struct RefPattern: Sendable, Hashable, CustomStringConvertible {
    public enum Segment: Sendable, Hashable {
        case literal(String)
        /// One segment; `name` nil for `*`.
        case one(name: String?)
        /// Any number of segments; `name` nil for `**`.
        case many(name: String?)
    }

    public let segments: [Segment]
    /// The text it was parsed from, without leading or trailing slashes.
    public let text: String

    /// Longest pattern text accepted.
    public static let maxLength = 768

    public struct ParseError: Error, Sendable, Equatable, CustomStringConvertible {
        public let description: String
    }

    public init(_ raw: String) throws(ParseError) {
        guard raw.utf8.count <= Self.maxLength else { throw ParseError(description: "longer than \(Self.maxLength) bytes") }
        let trimmed = raw.split(separator: "/", omittingEmptySubsequences: false).drop { $0.isEmpty }
        let parts = Array(trimmed.reversed().drop { $0.isEmpty }.reversed())
        text = parts.joined(separator: "/")
        guard parts.count <= DataPath.maxSegments else {
            throw ParseError(description: "deeper than \(DataPath.maxSegments) segments")
        }
        var segments: [Segment] = []
        var names = Set<String>()
        for part in parts {
            guard !part.isEmpty else { throw ParseError(description: "an empty segment (two slashes in a row)") }
            let segment = try Self.segment(String(part))
            switch segment {
            case .one(let name?), .many(let name?):
                guard names.insert(name).inserted else { throw ParseError(description: "the parameter {\(name)} appears twice") }
            default:
                break
            }
            segments.append(segment)
        }
        guard segments.filter({ if case .many = $0 { return true } else { return false } }).count <= 1 else {
            throw ParseError(description: "more than one multi-segment wildcard (** or {name=**})")
        }
        self.segments = segments
    }

    private static func segment(_ part: String) throws(ParseError) -> Segment {
        if part == "*" { return .one(name: nil) }
        if part == "**" { return .many(name: nil) }
        if part.hasPrefix("{") {
            guard part.hasSuffix("}"), part.count >= 3 else { throw ParseError(description: "\(part): a parameter is {name}, {name=*} or {name=**}") }
            let inner = part.dropFirst().dropLast()
            let pieces = inner.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let name = String(pieces[0])
            guard !name.isEmpty, name.utf8.allSatisfy({ isNameByte($0) }), !(name.first?.isNumber ?? true) else {
                throw ParseError(description: "\(part): a parameter name is letters, digits and _ (not starting with a digit)")
            }
            if pieces.count == 1 || pieces[1] == "*" { return .one(name: name) }
            if pieces[1] == "**" { return .many(name: name) }
            throw ParseError(description: "\(part): after = only * or ** may follow")
        }
        guard !part.contains("*"), !part.contains("{"), !part.contains("}") else {
            throw ParseError(description: "\(part): a wildcard or parameter must be the whole segment")
        }
        do {
            _ = try DataPath(segments: [part])
        } catch {
            throw ParseError(description: "\(part): \(error)")
        }
        return .literal(part)
    }

    private static func isNameByte(_ byte: UInt8) -> Bool {
        (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A) || byte == 0x5F
    }

    public var description: String { "/" + text }

    /// True when the pattern has no wildcard: it names one location.
    var isExact: Bool { segments.allSatisfy { if case .literal = $0 { return true } else { return false } } }

    /// The parameters `path` gives, or nil when it does not match.
    public func match(_ path: DataPath) -> [String: String]? {
        let keys = path.segments
        guard let manyIndex = segments.firstIndex(where: { if case .many = $0 { return true } else { return false } }) else {
            guard keys.count == segments.count else { return nil }
            return Self.matchFixed(segments[...], keys[...])
        }
        let tail = segments.count - manyIndex - 1
        guard keys.count >= segments.count - 1 else { return nil }
        guard var params = Self.matchFixed(segments[..<manyIndex], keys[..<manyIndex]),
              let tailParams = Self.matchFixed(segments[(manyIndex + 1)...], keys[(keys.count - tail)...]) else { return nil }
        params.merge(tailParams) { first, _ in first }
        if case .many(let name?) = segments[manyIndex] {
            params[name] = keys[manyIndex..<(keys.count - tail)].joined(separator: "/")
        }
        return params
    }

    /// Whether some location at or below `path` could match: `path` matches a prefix of
    /// the pattern (a write there may change a matching location below it).
    func mayMatchBelow(_ path: DataPath) -> Bool {
        for (index, key) in path.segments.enumerated() {
            guard index < segments.count else { return false }
            switch segments[index] {
            case .literal(let literal): if JSONKey(literal) != JSONKey(key) { return false }
            case .one: continue
            case .many: return true
            }
        }
        return true
    }

    private static func matchFixed(_ pattern: ArraySlice<Segment>, _ keys: ArraySlice<String>) -> [String: String]? {
        var params: [String: String] = [:]
        for (segment, key) in zip(pattern, keys) {
            switch segment {
            case .literal(let literal): if JSONKey(literal) != JSONKey(key) { return nil }
            case .one(let name): if let name { params[name] = key }
            case .many: return nil  // not in a fixed part
            }
        }
        return params
    }
}
