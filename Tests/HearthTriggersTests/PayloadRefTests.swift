import HearthJSON
import Testing
@testable import HearthTriggers

/// The scan for a stored event's `ref` answers what a whole parse answers.
@Suite struct PayloadRefTests {
    static func parsed(_ bytes: [UInt8]) -> String? {
        guard case .object(let members)? = try? JSONParser.parse(bytes), case .string(let ref)? = members["ref"] else { return nil }
        return ref
    }

    @Test(arguments: [
        // (payload, what the scan decides by itself: "found:<ref>", "absent", "unsure")
        (#"{"authtype":"app_user","data":null,"delta":{"name":"Oslo"},"ref":"users/u1/favorites/f1","type":"t"}"#, "found:users/u1/favorites/f1"),
        (#" { "data" : "}\"ref\":\"no\"" , "ref" : "yes" } "#, "found:yes"),
        (#"{"data":[{"ref":"inner"},[1,2,{"a":"]"}]],"ref":"outer"}"#, "found:outer"),
        (#"{"data":{"ref":"inner"}}"#, "absent"),
        (#"{}"#, "absent"),
        (#"{"ref":"é 😀 日本"}"#, "found:é 😀 日本"),
        (#"{"ref":"a\u0062"}"#, "unsure"),
        (#"{"r\u0065f":"x"}"#, "unsure"),
        (#"{"ref":"a","ref":"b"}"#, "unsure"),
        (#"{"ref":1}"#, "unsure"),
        (#"{"ref":"x""#, "unsure"),
        (#"{"ref":"x"} trailing"#, "unsure"),
        (#"[{"ref":"x"}]"#, "unsure"),
        (#"{"data":-1.5e3,"deleted":true,"ref":"r","z":null}"#, "found:r"),
        (#"{"data":"\\","ref":"r"}"#, "found:r"),
        ("", "unsure"),
    ])
    func literals(_ payload: String, _ decided: String) {
        let bytes = Array(payload.utf8)
        let scan = PayloadRef.scan(bytes)
        switch scan {
        case .found(let ref): #expect(decided == "found:" + ref)
        case .absent: #expect(decided == "absent")
        case .unsure: #expect(decided == "unsure")
        }
        #expect(PayloadRef.ref(bytes) == Self.parsed(bytes), "\(payload)")
    }

    /// Payloads as the matcher writes them, with values of every kind (strings full of
    /// quotes, braces, backslashes and the word ref) around the `ref`.
    @Test func writtenPayloadsAnswerAsTheParserDoes() {
        var generator = SystemRandomNumberGenerator()
        let pieces = ["ref", "\"", "\\", "{", "}", "[", "]", ",", ":", "é", "😀", "\n", "\u{1}", "a", " "]
        func text() -> String { (0..<Int.random(in: 0..<8, using: &generator)).map { _ in pieces.randomElement(using: &generator)! }.joined() }
        func value(_ depth: Int) -> JSONValue {
            switch Int.random(in: 0..<(depth > 3 ? 5 : 7), using: &generator) {
            case 0: return .null
            case 1: return .bool(Bool.random(using: &generator))
            case 2: return .int(Int64.random(in: -1_000_000...1_000_000, using: &generator))
            case 3: return .double(Double.random(in: -1e6...1e6, using: &generator))
            case 4: return .string(text())
            case 5: return .array((0..<Int.random(in: 0..<4, using: &generator)).map { _ in value(depth + 1) })
            default:
                var members: [JSONKey: JSONValue] = [:]
                for _ in 0..<Int.random(in: 0..<4, using: &generator) { members[JSONKey(text())] = value(depth + 1) }
                return .object(members)
            }
        }
        var scanned = 0
        for _ in 0..<3_000 {
            var members: [JSONKey: JSONValue] = ["data": value(0), "delta": value(0), "type": .string("t"), "authtype": .string("admin")]
            if Bool.random(using: &generator) { members["ref"] = .string(text()) }
            if Int.random(in: 0..<4, using: &generator) == 0 { members[JSONKey(text())] = value(0) }
            let bytes = JSONWriter.write(.object(members))
            if PayloadRef.scan(bytes) != .unsure { scanned += 1 }
            #expect(PayloadRef.ref(bytes) == Self.parsed(bytes), "\(String(decoding: bytes, as: UTF8.self))")
        }
        #expect(scanned > 1_000)  // most answered by the scan itself, not the fallback
    }
}
