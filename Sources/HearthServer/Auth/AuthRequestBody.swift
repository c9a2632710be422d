import HearthAccounts
import HearthHTTP
import HearthJSON

/// The fields of an Identity Toolkit or Secure Token request. JSON objects are accepted
/// with camelCase or snake_case keys (the emulator takes both), and `/v1/token` also takes
/// an `application/x-www-form-urlencoded` body (docs/protocol/auth.md §4.1).
struct AuthRequestBody: Sendable {
    private var fields: [JSONKey: JSONValue]

    /// Largest accepted body; account requests are small.
    static let maxBytes = 64 * 1024

    init(_ request: HTTPRequest) throws(AuthError) {
        guard request.body.count <= Self.maxBytes else { throw AuthError("INVALID_JSON_PAYLOAD", detail: "body too large") }
        let contentType = request.headers["Content-Type"]?.lowercased() ?? ""
        // `curl -d '{...}'` labels JSON as a form: a body that starts like a JSON object is
        // read as one (no form field name starts with `{`), so it is never mistaken for an
        // empty request (which signUp would take as an anonymous sign-up).
        let looksLikeJSON = request.body.first { $0 != UInt8(ascii: " ") && $0 != UInt8(ascii: "\n") } == UInt8(ascii: "{")
        if contentType.hasPrefix("application/x-www-form-urlencoded") && !looksLikeJSON {
            fields = [:]
            for pair in request.body.split(separator: UInt8(ascii: "&")) {
                let parts = pair.split(separator: UInt8(ascii: "="), maxSplits: 1, omittingEmptySubsequences: false)
                guard let name = PercentEncoding.decode(parts[0], plusIsSpace: true),
                      let value = PercentEncoding.decode(parts.count > 1 ? parts[1] : [], plusIsSpace: true) else {
                    throw AuthError("INVALID_JSON_PAYLOAD", detail: "bad form encoding")
                }
                fields[name] = .string(value)
            }
            return
        }
        if request.body.isEmpty {
            fields = [:]
            return
        }
        guard case .object(let object)? = try? JSONParser.parse(request.body) else { throw .invalidJSON }
        fields = object
    }

    /// Fields given directly (a GET's query parameters).
    init(fields: [JSONKey: JSONValue]) {
        self.fields = fields
    }

    /// The value of `camelName` or its snake_case spelling.
    func value(_ camelName: String) -> JSONValue? {
        if let v = fields[camelName] { return v }
        return fields[Self.snakeCase(camelName)]
    }

    /// The string `name` holds; nil when it is absent, null or empty. Any other type is
    /// refused (`typeMismatch`) rather than read as absent: `{"email": 1}` on signUp must
    /// not become an anonymous sign-up.
    func string(_ name: String) throws(AuthError) -> String? {
        switch value(name) {
        case nil, .null?: return nil
        case .string(let s)?: return s.isEmpty ? nil : s
        case let other?: throw Self.typeMismatch(name, expected: "TYPE_STRING", other)
        }
    }

    /// The boolean `name` holds (`true`/`false` as strings too); nil when absent or null.
    func bool(_ name: String) throws(AuthError) -> Bool? {
        switch value(name) {
        case nil, .null?: return nil
        case .bool(let b)?: return b
        case .string("true")?: return true
        case .string("false")?: return false
        case let other?: throw Self.typeMismatch(name, expected: "TYPE_BOOL", other)
        }
    }

    /// An integer given as a JSON number or a string of digits (int64 fields in Google's
    /// JSON mapping are strings); nil when absent or null, and for a number or string that
    /// is not an integer, which each caller refuses with its own range message.
    func int(_ name: String) throws(AuthError) -> Int64? {
        switch value(name) {
        case nil, .null?: return nil
        case .int(let i)?: return i
        case .double(let d)?: return d == d.rounded() && abs(d) < 9e15 ? Int64(d) : nil
        case .string(let s)?: return Int64(s)
        case let other?: throw Self.typeMismatch(name, expected: "TYPE_INT64", other)
        }
    }

    /// A repeated string field: an array of strings, or one string.
    func strings(_ name: String) throws(AuthError) -> [String] {
        switch value(name) {
        case nil, .null?: return []
        case .string(let s)?: return [s]
        case .array(let items)?:
            var strings: [String] = []
            for item in items {
                guard case .string(let s) = item else { throw Self.typeMismatch(name, expected: "TYPE_STRING", item) }
                strings.append(s)
            }
            return strings
        case let other?: throw Self.typeMismatch(name, expected: "TYPE_STRING", other)
        }
    }

    /// The answer to a field of the wrong type, worded as Google's JSON mapping words it
    /// but naming the type given, never the value: the field may be a password or a token,
    /// and secrets never go into a response.
    static func typeMismatch(_ name: String, expected: String, _ value: JSONValue) -> AuthError {
        let given = switch value {
        case .null: "null"
        case .bool: "a boolean"
        case .int, .double: "a number"
        case .string: "a string"
        case .array: "an array"
        case .object: "an object"
        }
        return AuthError("INVALID_JSON_PAYLOAD", detail: "Invalid value at '\(snakeCase(name))' (\(expected)): \(given)")
    }

    static func snakeCase(_ camel: String) -> String {
        var out = ""
        for ch in camel {
            if ch.isUppercase {
                out.append("_")
                out.append(contentsOf: ch.lowercased())
            } else {
                out.append(ch)
            }
        }
        return out
    }
}
