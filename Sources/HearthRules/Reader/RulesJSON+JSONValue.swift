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
            let members = children.sorted { $0.key < $1.key }.map { child in
                Member(key: child.key, keyOffset: nil, value: RulesJSON(child.value))
            }
            self.init(kind: .object(members), offset: nil)
        }
    }
}
