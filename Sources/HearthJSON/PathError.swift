/// Why a path or key was rejected (docs/protocol/rest.md §1.7, §1.9).
///
/// `description` is a human message for the `{"error":"Invalid path: ..."}` response. It
/// quotes at most `PathError.maxEchoedCharacters` characters of the offending input, with
/// control characters replaced, so an error can neither reflect a large payload nor inject
/// lines into a log.
public enum PathError: Error, Sendable, Hashable {
    /// What is wrong with a key.
    public enum KeyProblem: Sendable, Hashable {
        case empty
        /// More than `DataPath.maxKeyBytes` bytes of UTF-8 (the actual count is attached).
        case tooLong(bytes: Int)
        /// One of `. $ # [ ] /` or an ASCII control character (U+0000–U+001F, U+007F).
        case forbiddenCharacter(Unicode.Scalar)
    }

    /// A segment is not a valid key. `key` is the full offending key (decoded).
    case invalidKey(key: String, problem: KeyProblem)
    /// The path would have `depth` segments; at most `DataPath.maxSegments` are allowed.
    case tooDeep(depth: Int)
    /// A URL path segment has a malformed `%` escape, or decodes to invalid UTF-8.
    /// `segment` is the raw (still encoded) segment.
    case badEncoding(segment: String)

    /// How much user input a message may quote.
    public static let maxEchoedCharacters = 100
}

extension PathError: CustomStringConvertible {
    public var description: String {
        switch self {
        case .invalidKey(let key, let problem):
            return "Invalid path: " + Self.describe(key: key, problem)
        case .tooDeep(let depth):
            return "Invalid path: the path is \(depth) levels deep; paths must be fewer than \(DataPath.maxDepth) levels deep"
        case .badEncoding(let segment):
            return "Invalid path: segment \"\(Self.excerpt(segment))\" is not valid percent-encoded UTF-8"
        }
    }

    /// "key \"...\" <problem>", shared with `TreeError` for keys inside written data.
    static func describe(key: String, _ problem: KeyProblem) -> String {
        switch problem {
        case .empty:
            return "keys must not be empty"
        case .tooLong(let bytes):
            return "key \"\(excerpt(key))\" is \(bytes) bytes long; keys must be at most \(DataPath.maxKeyBytes) bytes"
        case .forbiddenCharacter(let scalar):
            let shown = scalar.value < 0x20 || scalar.value == 0x7F
                ? "U+" + hex4(scalar.value) : String(Character(scalar))
            return "key \"\(excerpt(key))\" contains \(shown); keys must not contain . $ # [ ] / or control characters"
        }
    }

    /// At most `maxEchoedCharacters` scalars of `text`, control characters shown as `?`,
    /// with "..." when cut.
    static func excerpt(_ text: String) -> String {
        var out = String.UnicodeScalarView()
        var count = 0
        for scalar in text.unicodeScalars {
            if count == maxEchoedCharacters {
                out.append(contentsOf: "...".unicodeScalars)
                break
            }
            out.append(scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value) ? "?" : scalar)
            count += 1
        }
        return String(out)
    }

    private static func hex4(_ v: UInt32) -> String {
        let s = String(v, radix: 16, uppercase: true)
        return String(repeating: "0", count: max(0, 4 - s.count)) + s
    }
}
