/// Why a value cannot be written to the tree (docs/protocol/rest.md §1.7, §1.8).
///
/// Locations are the *parent* under which the problem sits (always a valid path); the
/// `description` quotes user input only through `PathError.excerpt` (at most 100
/// characters, control characters replaced).
public enum TreeError: Error, Sendable, Hashable {
    /// An object member's key is not a valid key.
    case invalidKey(key: String, problem: PathError.KeyProblem, under: DataPath)
    /// A child of `under` would be `depth` segments deep; at most `DataPath.maxSegments`.
    case tooDeep(depth: Int, under: DataPath)
    /// A string of `bytes` UTF-8 bytes, over `FirebaseTree.maxStringBytes`, at `at`.
    case stringTooLong(bytes: Int, at: DataPath)
    /// NaN or ±Infinity at `at` (only reachable for values built in code; the parser
    /// never produces them).
    case invalidNumber(at: DataPath)
    /// An increment (`{".sv":{"increment":n}}`) at `at` whose sum would pass the largest
    /// double (±1.7976931348623157e308).
    case incrementOutOfRange(at: DataPath)
    /// `.priority` or `.value` where Hearth does not take them (the import tool).
    case unsupportedPseudoKey(key: String, under: DataPath)
    /// A `.priority` that is not a string, number or null, or a `.value` beside other keys.
    case invalidPriority(under: DataPath, detail: String)
    /// A `.sv` object that is not `"timestamp"` or `{"increment": <number>}`, or that has
    /// other keys beside `.sv`.
    case invalidServerValue(under: DataPath, detail: String)
}

extension TreeError: CustomStringConvertible {
    public var description: String {
        switch self {
        case .invalidKey(let key, let problem, let under):
            return "Invalid data at \(Self.show(under)): " + PathError.describe(key: key, problem)
        case .tooDeep(let depth, let under):
            return "Invalid data at \(Self.show(under)): a child would be \(depth) levels deep; paths must be fewer than \(DataPath.maxDepth) levels deep"
        case .stringTooLong(let bytes, let at):
            return "Invalid data at \(Self.show(at)): a string of \(bytes) bytes exceeds the limit of \(FirebaseTree.maxStringBytes) bytes"
        case .invalidNumber(let at):
            return "Invalid data at \(Self.show(at)): NaN and Infinity are not valid numbers"
        case .incrementOutOfRange(let at):
            return "Invalid data at \(Self.show(at)): the increment would pass the largest number, \(Double.greatestFiniteMagnitude)"
        case .invalidPriority(let under, let detail):
            return "Invalid data at \(Self.show(under)): \(detail)"
        case .invalidServerValue(let under, let detail):
            return "Invalid data at \(Self.show(under)): invalid server value \(PathError.excerpt(detail)); use {\".sv\":\"timestamp\"} or {\".sv\":{\"increment\":<number>}}"
        case .unsupportedPseudoKey(let key, let under):
            return "Invalid data at \(Self.show(under)): \"\(PathError.excerpt(key))\" is not supported yet"
        }
    }

    private static func show(_ path: DataPath) -> String {
        PathError.excerpt(path.description)
    }
}
