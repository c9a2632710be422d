// libFuzzer target for HearthJSON (docs/linux-notes.md, "libFuzzer with Swift here").
//
//   swift build -c debug --scratch-path .build-fuzz --sanitize=fuzzer \
//       -Xswiftc -sanitize=fuzzer,address --product FuzzJSONParser
//   cp -r Fuzz/corpus/json /tmp/json-corpus
//   .build-fuzz/debug/FuzzJSONParser -max_total_time=30 /tmp/json-corpus
//
// Only declarations live here: libFuzzer supplies `main` in the fuzzing build, and a plain
// `swift build` still compiles this into a harmless no-op executable.
//
// Properties checked for every input that parses:
// * writing (compact and pretty) and re-parsing gives the same value up to JavaScript
//   number identity (an integral double within ±2^53 comes back as `.int`), and writing
//   that again gives the same bytes;
// * normalisation either fails with a TreeError or gives a value that is already normal
//   (normalising it again changes nothing), and rendering it round-trips through the
//   writer and parser too.
// * Firebase key order is a strict total order on the keys of every parsed object.
// * the streaming reader (JSONStreamReader, 3-byte chunks) gives the same value or error.
// Every input is also tried as a URL path.

import HearthJSON

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let bytes = UnsafeRawBufferPointer(start: data, count: size)
    _ = try? DataPath(urlPath: String(decoding: bytes, as: UTF8.self))
    checkStreamReader(bytes)

    guard let value = try? JSONParser.parse(bytes) else { return 0 }
    checkRoundTrip(value)
    if case .object(let members) = value { checkKeyOrder(members.keys.strings) }

    if let normal = try? FirebaseTree.normalize(value, at: .root) {
        precondition((try? FirebaseTree.normalize(normal, at: .root)) == normal, "normalize is not idempotent")
        checkRoundTrip(FirebaseTree.render(normal))
        checkRoundTrip(FirebaseTree.shallow(normal))
        if case .object = value {
            _ = try? MultiPathUpdate.parse(base: .root, body: value)
        }
    }
    return 0
}

/// Write → parse → write must be stable in both styles.
func checkRoundTrip(_ value: JSONValue) {
    let expected = javaScriptNumbers(value)
    for style in [JSONWriter.Style.compact, .pretty] {
        let text = JSONWriter.write(value, style: style)
        let reparsed: JSONValue
        do {
            reparsed = try JSONParser.parse(text)
        } catch {
            preconditionFailure("writer output does not parse: \(error.debugDescription)")
        }
        precondition(reparsed == expected, "round trip changed the value")
        precondition(JSONWriter.write(reparsed, style: style) == text, "second write differs")
    }
}

/// Sorted keys must be strictly increasing, and the comparison antisymmetric.
func checkKeyOrder(_ keys: [String]) {
    let sorted = FirebaseKeyOrder.sorted(keys)
    for (a, b) in zip(sorted, sorted.dropFirst()) {
        precondition(FirebaseKeyOrder.less(a, b) && !FirebaseKeyOrder.less(b, a), "key order is not strict")
        precondition(FirebaseKeyOrder.compareUTF16(a, b) == -Int(FirebaseKeyOrder.compareUTF16(b, a)), "UTF-16 order is not antisymmetric")
    }
}

/// `value` with every integral double within ±2^53 turned into `.int`, which is how the
/// writer prints (and so the parser reads back) such numbers.
func javaScriptNumbers(_ value: JSONValue) -> JSONValue {
    switch value {
    case .double(let d) where d.magnitude <= 9_007_199_254_740_992 && d.rounded(.towardZero) == d:
        return .int(Int64(d))
    case .array(let elements):
        return .array(elements.map(javaScriptNumbers))
    case .object(let members):
        return .object(members.mapValues(javaScriptNumbers))
    default:
        return value
    }
}

/// The streaming reader, fed 3 bytes at a time, must give the parser's value or error.
func checkStreamReader(_ bytes: UnsafeRawBufferPointer) {
    let expected = Result { () throws(JSONStreamError) -> JSONValue in
        do throws(JSONParseError) { return try JSONParser.parse(bytes) } catch { throw .syntax(error) }
    }
    var reader = JSONStreamReader(bytes: Array(bytes), chunkBytes: 3)
    let actual = Result { () throws(JSONStreamError) -> JSONValue in
        guard let first = try reader.next() else { throw .source("no event") }
        let value = try reader.value(startingWith: first)
        guard try reader.next() == nil else { throw .source("events after the value") }
        return value
    }
    precondition(actual == expected, "the stream reader and the parser disagree")
}
