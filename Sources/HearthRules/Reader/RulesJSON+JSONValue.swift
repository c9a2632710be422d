import HearthJSON

extension RulesJSON {
    /// Rules that arrive already parsed (no file): positions are unknown. Object keys are
    /// taken in sorted order so that diagnostics come out in a stable order.
    init(_ value: JSONValue) {
        switch value {
        case .null:
            self.init(kind: .null, offset: nil)
        case .bool(let flag):
            self.init(kind: .bool(flag), offset: nil)
        case .int(let number):
            self.init(kind: .number(String(number)), offset: nil)
        case .double(let number):
            self.init(kind: .number(String(number)), offset: nil)
        case .string(let text):
            self.init(kind: .string(RulesString(value: text, sourceOffsets: nil)), offset: nil)
        case .array(let elements):
            self.init(kind: .array(elements.map(RulesJSON.init)), offset: nil)
        case .object(let children):
            let members = children.sorted { $0.key.string < $1.key.string }.map { child in
                Member(key: child.key.string, keyOffset: nil, value: RulesJSON(child.value))
            }
            self.init(kind: .object(members), offset: nil)
        }
    }
}

extension RulesJSON {
    /// The value as strict JSON (comments and multi-line strings are gone; numbers keep
    /// their value).
    var jsonValue: JSONValue {
        switch kind {
        case .null: return .null
        case .bool(let flag): return .bool(flag)
        case .number(let text): return (try? JSONParser.parse(Array(text.utf8))) ?? .string(text)
        case .string(let string): return .string(string.value)
        case .array(let elements): return .array(elements.map(\.jsonValue))
        case .object(let members):
            var object: [JSONKey: JSONValue] = [:]
            for member in members { object[member.key] = member.value.jsonValue }
            return .object(object)
        }
    }
}

extension RuleSet {
    /// A rules file's text as strict JSON (`GET /.settings/rules.json?format=strict`):
    /// comments and line breaks inside strings dropped. Throws like `compile` on bad syntax.
    public static func strictJSON(_ text: String) throws(RulesCompileError) -> JSONValue {
        let source = SourceText(text)
        do {
            return try RulesFileParser.parse(source).jsonValue
        } catch {
            let (line, column) = source.location(ofByte: error.offset)
            throw RulesCompileError(diagnostics: [
                RuleDiagnostic(kind: .syntax, rulePath: error.path, line: line, column: column, message: error.message)
            ])
        }
    }
}
