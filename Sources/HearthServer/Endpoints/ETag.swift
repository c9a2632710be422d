import HearthAuth
import HearthHTTP
import HearthJSON

/// Conditional requests (docs/protocol/rest.md §1.4). An ETag is opaque: the first 20 bytes
/// of the SHA-256 of the stored value's compact JSON (Firebase key order, so equal values
/// have equal tags), in base64. It changes exactly when something at or below the path
/// changes.
enum ETag {
    static func of(_ storedValue: JSONValue) -> String {
        Base64.encode(SHA256.hash(JSONWriter.write(storedValue)).prefix(20))
    }

    /// `X-Firebase-ETag: true` asks for the `ETag` header.
    static func wanted(_ request: HTTPRequest) -> Bool {
        request.headers["X-Firebase-ETag"]?.lowercased() == "true"
    }

    /// The `if-match` tag of a write, if any.
    static func ifMatch(_ request: HTTPRequest) -> String? {
        request.headers["If-Match"].map(unquoted)
    }

    /// The `if-none-match` tag of a read, if any.
    static func ifNoneMatch(_ request: HTTPRequest) -> String? {
        request.headers["If-None-Match"].map(unquoted)
    }

    /// Clients may send the tag as received (the Firebase SDKs do), quoted (`"tag"`), or
    /// quoted behind the weak marker (`W/"tag"`, the entity-tag grammar of RFC 9110 §8.8.3).
    /// `W/` is a marker only in front of a quoted tag: a tag is base64, so about one value
    /// in 4,096 has a tag that itself begins with `W/`, and that tag sent as received must
    /// be compared whole.
    static func unquoted(_ tag: String) -> String {
        var text = Substring(tag).drop { $0 == " " }
        while text.last == " " { text = text.dropLast() }
        let quoted = text.dropFirst(text.hasPrefix("W/\"") ? 2 : 0)
        if quoted.count >= 2, quoted.first == "\"", quoted.last == "\"" { return String(quoted.dropFirst().dropLast()) }
        return String(text)
    }
}

/// A write whose `if-match` no longer matches: 412 with the current tag and the current
/// value as the body (docs/protocol/rest.md §1.4; the Python SDK's `set_if_unchanged` and
/// `transaction` retry from it). Only a caller who may read the path gets here: for any
/// other the core refuses the compare-and-set before comparing (401), so neither the body
/// nor the outcome tells anything of the data.
struct PreconditionFailed: Error, Sendable {
    let response: HTTPResponse

    init(current: JSONValue, etag: String, options: QueryOptions) {
        var response = JSONResponse.make(current, options: options.print == .silent ? .defaults : options, status: 412)
        response.headers.add("ETag", etag)
        self.response = response
    }
}
