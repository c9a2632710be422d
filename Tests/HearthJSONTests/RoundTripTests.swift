import HearthTesting
import Foundation
import Testing
@testable import HearthJSON

@Suite("Round trips and the Foundation oracle")
struct RoundTripTests {
    static let documents: [String] = [
        "null", "true", "0", "-1", "3.25", "\"x\"", "[]", "{}",
        #"{"users":{"alice":{"name":"Alice","age":30,"tags":["a","b"],"score":97.5}}}"#,
        #"[1,-2,3.5e10,-4.25e-8,0.1,1e21,1e-7,123456789,-0.5]"#,
        #"{"nested":[[[[{"deep":[true,false,null]}]]]]}"#,
        #"{"escapes":"quote \" backslash \\ slash \/ nl \n tab \t ctl \u0001 nul \u0000 é \u00e9 😀 \ud83d\ude00"}"#,
        #"{"1":"one","01":"zero-one","-5":"neg","a":"a","A":"A","":"empty"}"#,
        #"{"big":9223372036854775807,"small":-9223372036854775808,"frac":0.30000000000000004}"#,
        #"  [ {"a" : 1 } , { "b" : [ ] } ]  "#,
        #"{"unicode":"日本語テキスト","emoji":"👩‍👩‍👧‍👦","ascii":"~!@#$%^&*()"}"#,
    ]

    @Test(arguments: documents)
    func agreesWithFoundation(_ text: String) throws {
        let ours = try parse(text)
        let theirs = try JSONSerialization.jsonObject(with: Data(text.utf8), options: [.fragmentsAllowed])
        #expect(matches(ours, theirs), "\(text)")
        // Foundation also reads what we write, to the same value.
        let written = JSONWriter.write(ours)
        let reread = try JSONSerialization.jsonObject(with: Data(written), options: [.fragmentsAllowed])
        #expect(matches(ours, reread), "\(String(decoding: written, as: UTF8.self))")
    }

    @Test(arguments: documents)
    func writeParseWriteIsStable(_ text: String) throws {
        let value = try parse(text)
        for style in [JSONWriter.Style.compact, .pretty] {
            let once = JSONWriter.write(value, style: style)
            let reparsed = try JSONParser.parse(once)
            #expect(reparsed == javaScriptNumbers(value))
            #expect(JSONWriter.write(reparsed, style: style) == once)
        }
    }

    @Test func doublesRoundTripExactly() throws {
        var generator = SplitMix64(seed: 42)
        for _ in 0..<20_000 {
            let d = Double(bitPattern: generator.next())
            guard d.isFinite else { continue }
            let text = json(.double(d))
            let back = try parse(text)
            switch back {
            case .double(let r): #expect(r == d, "\(text)")
            case .int(let i): #expect(Double(i) == d && d.magnitude <= 9_007_199_254_740_992, "\(text)")
            default: Issue.record("\(text) parsed as \(back)")
            }
        }
    }

    /// The writer prints integral doubles within ±2^53 as integers, so they come back as
    /// `.int`: this is the value a round trip must give.
    private func javaScriptNumbers(_ value: JSONValue) -> JSONValue {
        switch value {
        case .double(let d) where d.magnitude <= 9_007_199_254_740_992 && d.rounded(.towardZero) == d:
            return .int(Int64(d))
        case .array(let elements): return .array(elements.map(javaScriptNumbers))
        case .object(let members): return .object(members.mapValues(javaScriptNumbers))
        default: return value
        }
    }

    @Test func integralDoublesBecomeIntegers() throws {
        #expect(try parse(json(.double(5.0))) == .int(5))
        #expect(try parse(json(.double(1e16))) == .double(1e16))
    }

    /// Our value against Foundation's `Any`, numbers compared by value.
    ///
    /// Foundation on Linux returns some numbers (large negatives, long fractions) as
    /// `NSDecimalNumber`, whose `doubleValue` is not correctly rounded: those are compared
    /// by their decimal text (integers) or to within 1e-15 relative (doubles). Our exact
    /// rounding is tested against the C library in JSONParserTests.
    private func matches(_ ours: JSONValue, _ theirs: Any) -> Bool {
        if let decimal = theirs as? NSDecimalNumber {
            switch ours {
            case .int(let i): return decimal.stringValue == String(i)
            case .double(let d): return abs(decimal.doubleValue - d) <= abs(d) * 1e-15
            default: return false
            }
        }
        switch ours {
        case .null:
            return theirs is NSNull
        case .bool(let b):
            guard let n = theirs as? NSNumber, String(cString: n.objCType) == "c" else { return false }
            return n.boolValue == b
        case .int(let i):
            guard let n = theirs as? NSNumber, String(cString: n.objCType) != "c" else { return false }
            if "ilqs".contains(String(cString: n.objCType)) { return n.int64Value == i }
            return n.doubleValue == Double(i)
        case .double(let d):
            guard let n = theirs as? NSNumber, String(cString: n.objCType) != "c" else { return false }
            return n.doubleValue == d
        case .string(let s):
            return (theirs as? String) == s
        case .array(let elements):
            guard let array = theirs as? [Any], array.count == elements.count else { return false }
            return zip(elements, array).allSatisfy { matches($0, $1) }
        case .object(let members):
            guard let dict = theirs as? [String: Any], dict.count == members.count else { return false }
            return members.allSatisfy { key, value in dict[key.string].map { matches(value, $0) } ?? false }
        }
    }
}

