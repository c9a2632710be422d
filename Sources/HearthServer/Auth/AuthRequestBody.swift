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

    func string(_ name: String) -> String? {
        if case .string(let s)? = value(name), !s.isEmpty { return s }
        return nil
    }

    func bool(_ name: String) -> Bool? {
        switch value(name) {
        case .bool(let b)?: return b
        case .string("true")?: return true
        case .string("false")?: return false
        default: return nil
        }
    }

    /// An integer given as a JSON number or a string of digits (int64 fields in Google's
    /// JSON mapping are strings).
    func int(_ name: String) -> Int64? {
        switch value(name) {
        case .int(let i)?: return i
        case .double(let d)? where d == d.rounded() && abs(d) < 9e15: return Int64(d)
        case .string(let s)?: return Int64(s)
        default: return nil
        }
    }

    func strings(_ name: String) -> [String] {
        switch value(name) {
        case .array(let items)?: return items.compactMap(\.stringValue)
        case .string(let s)?: return [s]
        default: return []
        }
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
