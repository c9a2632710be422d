import HearthRules
#if canImport(Glibc)
import Glibc
#endif

/// Reads and compiles a rules file (docs/protocol/rules.md §3.1).
public enum RulesLoader {
    /// Rules files larger than this are refused (Firebase's own limit is 256 KB of rules;
    /// this leaves room while keeping a stray huge file from being read into memory).
    static let maxRulesFileBytes = 4 * 1024 * 1024

    public enum LoadError: Error, CustomStringConvertible {
        case unreadable(path: String, reason: String)
        /// No file at `path` (`ENOENT`): a start-up names how to make one.
        case missing(path: String)
        case invalid(path: String, RulesCompileError)

        public var description: String {
            switch self {
            case .unreadable(let path, let reason):
                return "cannot read rules file \(path): \(reason)"
            case .missing(let path):
                return "cannot read rules file \(path): \(String(cString: strerror(ENOENT)))"
            case .invalid(let path, let error):
                let lines = error.diagnostics.map { "  \(path):\($0.line):\($0.column): \($0.rulePath): \($0.message)" }
                return "rules file \(path) is invalid (\(error.diagnostics.count) error\(error.diagnostics.count == 1 ? "" : "s")):\n"
                    + lines.joined(separator: "\n")
            }
        }
    }

    public static func load(_ path: String) throws(LoadError) -> RuleSet {
        try loadWithText(path).rules
    }

    /// The compiled rules and the text they came from.
    static func loadWithText(_ path: String) throws(LoadError) -> (rules: RuleSet, text: String) {
        let text = try readText(path)
        do {
            return (try RuleSet.compile(text), text)
        } catch {
            throw .invalid(path: path, error)
        }
    }

    /// The file's text (UTF-8), read with plain POSIX calls.
    public static func readText(_ path: String) throws(LoadError) -> String {
        guard let file = fopen(path, "rb") else {
            let code = errno
            if code == ENOENT { throw .missing(path: path) }
            throw .unreadable(path: path, reason: String(cString: strerror(code)))
        }
        defer { fclose(file) }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let count = fread(&buffer, 1, buffer.count, file)
            if count > 0 { bytes.append(contentsOf: buffer[0..<count]) }
            if bytes.count > maxRulesFileBytes {
                throw .unreadable(path: path, reason: "larger than \(maxRulesFileBytes) bytes")
            }
            if count < buffer.count {
                if ferror(file) != 0 { throw .unreadable(path: path, reason: "read error") }
                break
            }
        }
        guard let text = String(validating: bytes, as: UTF8.self) else {
            throw .unreadable(path: path, reason: "not UTF-8 text")
        }
        return text
    }
}
