import Testing
@testable import HearthJSON

@Suite("JSONWriter")
struct JSONWriterTests {
    @Test(arguments: [
        (JSONValue.int(0), "0"),
        (.int(-42), "-42"),
        (.int(.max), "9223372036854775807"),
        (.int(.min), "-9223372036854775808"),
        (.double(5.0), "5"),
        (.double(-5.0), "-5"),
        (.double(-0.0), "0"),
        (.double(100), "100"),
        (.double(9_007_199_254_740_992), "9007199254740992"),
        (.double(-9_007_199_254_740_992), "-9007199254740992"),
        (.double(9_007_199_254_740_994), "9.007199254740994e+15"),
        (.double(1e16), "1e+16"),
        (.double(1.152921504606847e18), "1.152921504606847e+18"),
        (.double(1e20), "1e+20"),
        (.double(1e21), "1e+21"),
        (.double(1e22), "1e+22"),
        (.double(1.5e300), "1.5e+300"),
        (.double(-1.5e300), "-1.5e+300"),
        (.double(.greatestFiniteMagnitude), "1.7976931348623157e+308"),
        (.double(0.1), "0.1"),
        (.double(-0.1), "-0.1"),
        (.double(0.30000000000000004), "0.30000000000000004"),
        (.double(123.456), "123.456"),
        (.double(1.5), "1.5"),
        (.double(1e-6), "0.000001"),
        (.double(1.5e-6), "0.0000015"),
        (.double(1e-7), "1e-7"),
        (.double(-2.5e-7), "-2.5e-7"),
        (.double(.leastNonzeroMagnitude), "5e-324"),
        (.double(123456789012.5), "123456789012.5"),
        (.double(4503599627370495.5), "4503599627370495.5"),
        (.double(.nan), "null"),
        (.double(.infinity), "null"),
    ])
    func numbers(_ value: JSONValue, _ expected: String) {
        #expect(json(value) == expected)
    }

    @Test(arguments: [
        ("plain", #""plain""#),
        ("", #""""#),
        ("q\"b\\s/", #""q\"b\\s/""#),
        ("\u{08}\u{0C}\n\r\t", #""\b\f\n\r\t""#),
        ("\u{0}\u{1}\u{1F}", #""\u0000\u0001\u001f""#),
        ("\u{7F}", "\"\u{7F}\""),
        ("é日本😀", "\"é日本😀\""),
        ("\u{2028}", "\"\u{2028}\""),
        ("a\nb", #""a\nb""#),
    ])
    func strings(_ s: String, _ expected: String) {
        #expect(json(.string(s)) == expected)
    }

    @Test func literals() {
        #expect(json(.null) == "null")
        #expect(json(true) == "true")
        #expect(json(false) == "false")
        #expect(json([]) == "[]")
        #expect(json([:]) == "{}")
    }

    @Test func objectKeysFollowFirebaseKeyOrder() {
        let value: JSONValue = ["b": 1, "a": 2, "10": 3, "9": 4, "-1": 5, "01": 6, "1": 7, "A": 8]
        #expect(json(value) == #"{"-1":5,"1":7,"01":6,"9":4,"10":3,"A":8,"a":2,"b":1}"#)
    }

    @Test func compactNesting() {
        let value: JSONValue = ["list": [1, ["x": .null], []], "o": [:]]
        #expect(json(value) == #"{"list":[1,{"x":null},[]],"o":{}}"#)
    }

    @Test func pretty() {
        let value: JSONValue = ["b": [1, 2], "a": ["c": "d"], "e": [:], "f": []]
        let expected = """
            {
              "a": {
                "c": "d"
              },
              "b": [
                1,
                2
              ],
              "e": {},
              "f": []
            }
            """
        #expect(json(value, style: .pretty) == expected)
        #expect(json(5, style: .pretty) == "5")
        #expect(json([:], style: .pretty) == "{}")
    }

    @Test func appendsIntoAnExistingBuffer() {
        var buffer = Array("data: ".utf8)
        JSONWriter.write(["a": 1], into: &buffer)
        #expect(String(decoding: buffer, as: UTF8.self) == #"data: {"a":1}"#)
        var raw: [UInt8] = []
        JSONWriter.writeString("x\"y", into: &raw)
        #expect(String(decoding: raw, as: UTF8.self) == #""x\"y""#)
    }

    @Test func writesBridgedAndSubstringBackedStrings() {
        let long = String(repeating: "ab\"", count: 1000)
        let sub = long.dropFirst(1).dropLast(1)
        #expect(json(.string(String(sub))) == "\"" + String(sub).replacingAll("\"", with: "\\\"") + "\"")
    }
}

extension String {
    fileprivate func replacingAll(_ target: Character, with replacement: String) -> String {
        var out = ""
        for c in self { if c == target { out += replacement } else { out.append(c) } }
        return out
    }
}
