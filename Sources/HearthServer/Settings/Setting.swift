import HearthJSON

/// One setting of `hearth serve`: its names in each layer, its default and what it does.
/// Layers, highest first: command-line flag, `HEARTH_*` environment variable,
/// the JSON config file (`--config`), the default.
public struct Setting: Sendable {
    public enum Kind: Sendable {
        case string
        case integer(ClosedRange<Int>)
        case number(ClosedRange<Double>)
        case boolean
        case choice([String])
        case list
    }

    /// The config file key (a member of the file's top-level object).
    public let key: String
    /// The environment variable.
    public let environment: String
    /// The long flag, without dashes, when the setting has one.
    public let flag: String?
    public let kind: Kind
    /// The default, as shown in the docs.
    let defaultText: String
    public let summary: String
    let apply: @Sendable (inout HearthConfiguration, SettingValue) -> Void

    init(_ key: String, env: String, flag: String? = nil, _ kind: Kind, default defaultText: String, _ summary: String,
         apply: @escaping @Sendable (inout HearthConfiguration, SettingValue) -> Void) {
        self.key = key
        self.environment = env
        self.flag = flag
        self.kind = kind
        self.defaultText = defaultText
        self.summary = summary
        self.apply = apply
    }

    /// Parses a value given as text (a flag or an environment variable).
    func parse(_ text: String, from source: String) throws(SettingError) -> SettingValue {
        switch kind {
        case .string:
            return .string(text)
        case .integer(let range):
            guard let value = Int(text), range.contains(value) else { throw SettingError(source, "a whole number in \(range.lowerBound)...\(range.upperBound)") }
            return .integer(value)
        case .number(let range):
            guard let value = Double(text), range.contains(value) else { throw SettingError(source, "a number in \(range.lowerBound)...\(range.upperBound)") }
            return .number(value)
        case .boolean:
            switch text.lowercased() {
            case "1", "true", "yes", "on": return .boolean(true)
            case "0", "false", "no", "off": return .boolean(false)
            default: throw SettingError(source, "true or false")
            }
        case .choice(let choices):
            guard choices.contains(text.lowercased()) else { throw SettingError(source, "one of " + choices.joined(separator: ", ")) }
            return .string(text.lowercased())
        case .list:
            return .list(text.split(separator: ",").map { String($0.filter { $0 != " " }) }.filter { !$0.isEmpty })
        }
    }

    /// Parses a value from the config file (JSON of the right type; text is accepted too).
    func parse(_ json: JSONValue, from source: String) throws(SettingError) -> SettingValue {
        switch (kind, json) {
        case (_, .string(let text)): return try parse(text, from: source)
        case (.integer, .int(let value)): return try parse(String(value), from: source)
        case (.number, .int(let value)): return try parse(String(value), from: source)
        case (.number, .double(let value)): return try parse(String(value), from: source)
        case (.boolean, .bool(let value)): return .boolean(value)
        case (.list, .array(let items)):
            var values: [String] = []
            for item in items {
                guard case .string(let text) = item else { throw SettingError(source, "a list of strings") }
                values.append(text)
            }
            return .list(values)
        default: throw SettingError(source, "\(kind.expectation)")
        }
    }
}

/// A parsed setting value.
enum SettingValue: Sendable, Equatable {
    case string(String)
    case integer(Int)
    case number(Double)
    case boolean(Bool)
    case list([String])

    var string: String { if case .string(let s) = self { return s } else { return "" } }
    var integer: Int { if case .integer(let i) = self { return i } else { return 0 } }
    var number: Double {
        switch self {
        case .number(let d): return d
        case .integer(let i): return Double(i)
        default: return 0
        }
    }
    var boolean: Bool { if case .boolean(let b) = self { return b } else { return false } }
    var list: [String] { if case .list(let l) = self { return l } else { return [] } }
}

/// A setting with a value it cannot take; the message names where it came from.
public struct SettingError: Error, CustomStringConvertible, Equatable {
    public let description: String
    init(_ source: String, _ expected: String) {
        description = "\(source) must be \(expected)"
    }
    init(message: String) {
        description = message
    }
}

extension Setting.Kind {
    var expectation: String {
        switch self {
        case .string: return "a string"
        case .integer(let r): return "a whole number in \(r.lowerBound)...\(r.upperBound)"
        case .number(let r): return "a number in \(r.lowerBound)...\(r.upperBound)"
        case .boolean: return "true or false"
        case .choice(let c): return "one of " + c.joined(separator: ", ")
        case .list: return "a list of strings"
        }
    }
}
