/// A strict RFC 8259 JSON parser that works directly over bytes.
///
/// Why not Foundation: `JSONSerialization`/`JSONDecoder` cost far too much per request on
/// Linux (docs/linux-notes.md), and Foundation stays a test oracle only. This parser:
///
/// * accepts exactly one value with optional surrounding whitespace (space, tab, LF, CR);
///   a byte-order mark, comments, trailing commas, `NaN`/`Infinity` and single quotes are
///   rejected;
/// * validates UTF-8 inside strings (no overlongs, no encoded surrogates, nothing above
///   U+10FFFF) and decodes every escape, joining `\uD83D\uDE00` surrogate pairs; a lone
///   surrogate escape is an error (a Swift `String` cannot hold one);
/// * keeps numbers exact: a literal without fraction or exponent that fits `Int64` becomes
///   `.int`; any other number becomes `.double`, correctly rounded; a number that overflows
///   `Double` is rejected (docs/protocol/rest.md §1.7 forbids ±Infinity);
/// * lets the last of duplicate object keys win (as JavaScript's `JSON.parse` does);
/// * is iterative, not recursive, and refuses nesting deeper than `maxNesting`, so hostile
///   input cannot overflow the stack here or in the recursive code that later walks the
///   value (writer, normalisation, `==`, deinit).
///
/// Errors are `JSONParseError`s carrying a byte offset; their `description` is the generic
/// Firebase text (docs/protocol/rest.md §1.9).
public enum JSONParser {
    /// The deepest nesting of arrays and objects accepted. `[[1]]` has nesting 2.
    ///
    /// The tree stores at most 31 levels anyway (docs/protocol/rest.md §1.7,
    /// `DataPath.maxDepth`); this limit only keeps parsing and the recursive walks over the
    /// result (writer, `==`, deinit) bounded, whatever the body is used for.
    public static let maxNesting = 512

    /// Parses one JSON document from raw bytes.
    public static func parse(_ bytes: UnsafeRawBufferPointer) throws(JSONParseError) -> JSONValue {
        let result: Result<JSONValue, JSONParseError> = bytes.withMemoryRebound(to: UInt8.self) { buffer in
            var reader = JSONReader(buffer)
            do throws(JSONParseError) {
                return .success(try reader.parseDocument())
            } catch {
                return .failure(error)
            }
        }
        return try result.get()
    }

    /// Parses one JSON document from a byte array.
    public static func parse(_ bytes: [UInt8]) throws(JSONParseError) -> JSONValue {
        let result: Result<JSONValue, JSONParseError> = bytes.withUnsafeBytes { raw in
            Result { () throws(JSONParseError) in try parse(raw) }
        }
        return try result.get()
    }

    /// Parses one JSON document from any byte collection (`ArraySlice`, `Data`, ...).
    public static func parse<Bytes: Collection>(_ bytes: Bytes) throws(JSONParseError) -> JSONValue
    where Bytes.Element == UInt8 {
        let contiguous: Result<JSONValue, JSONParseError>? = bytes.withContiguousStorageIfAvailable { buffer in
            Result { () throws(JSONParseError) in try parse(UnsafeRawBufferPointer(buffer)) }
        }
        if let contiguous { return try contiguous.get() }
        return try parse(Array(bytes))
    }

    /// Parses one JSON document from the UTF-8 of a string.
    public static func parse(_ text: String) throws(JSONParseError) -> JSONValue {
        var text = text
        let result: Result<JSONValue, JSONParseError> = text.withUTF8 { buffer in
            Result { () throws(JSONParseError) in try parse(UnsafeRawBufferPointer(buffer)) }
        }
        return try result.get()
    }
}
