import COpenSSL

/// The opening handshake, server side (RFC 6455 §4.2): which requests ask for a WebSocket,
/// which of those are acceptable, and the `101 Switching Protocols` that accepts one.
/// Knows nothing of what is spoken afterwards.
public enum WebSocketHandshake {
    /// Why an upgrade request was refused; each knows its response.
    public enum Refusal: Error, Sendable, Equatable {
        /// Not a GET over HTTP/1.1 with `Upgrade: websocket` and `Connection: Upgrade`.
        case notAnUpgrade
        /// `Sec-WebSocket-Version` is missing or not 13 → `426 Upgrade Required` naming the
        /// version we speak in `Sec-WebSocket-Version` (§4.4) and the protocol in `Upgrade`
        /// (RFC 9110 §15.5.22: a 426 MUST carry `Upgrade`).
        case unsupportedVersion
        /// `Sec-WebSocket-Key` missing, repeated, or not the base64 of 16 bytes (§4.1).
        case invalidKey

        public var response: HTTPResponse {
            switch self {
            case .notAnUpgrade:
                return HTTPResponseSerializer.errorResponse(status: 400, message: "Expected a WebSocket upgrade request")
            case .unsupportedVersion:
                var response = HTTPResponseSerializer.errorResponse(status: 426, message: "WebSocket version 13 is required")
                response.headers.add("Sec-WebSocket-Version", WebSocketHandshake.version)
                response.headers.add("Upgrade", "websocket")
                return response
            case .invalidKey:
                return HTTPResponseSerializer.errorResponse(status: 400, message: "Invalid Sec-WebSocket-Key")
            }
        }
    }

    /// The only protocol version (§4.1: "The value of this header field MUST be 13").
    public static let version = "13"
    /// Appended to the client's key before hashing (§1.3).
    static let guid = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"

    /// Whether the request asks to upgrade to a WebSocket at all (`Upgrade: websocket`):
    /// such a request is either accepted or refused as a handshake, never served as HTTP.
    public static func isUpgradeRequest(_ request: HTTPRequest) -> Bool {
        request.headers.values("Upgrade").contains { hasToken($0, "websocket") }
    }

    /// The `101` that accepts `request`, or why it cannot be accepted.
    public static func accept(_ request: HTTPRequest) -> Result<HTTPResponse, Refusal> {
        guard request.method == "GET", request.minorVersion >= 1, isUpgradeRequest(request),
              request.headers.values("Connection").contains(where: { hasToken($0, "upgrade") }) else {
            return .failure(.notAnUpgrade)
        }
        let versions = request.headers.values("Sec-WebSocket-Version")
        guard versions.count == 1, versions[0].trimmingWhitespace == version else { return .failure(.unsupportedVersion) }
        let keys = request.headers.values("Sec-WebSocket-Key")
        guard keys.count == 1, isValidKey(keys[0].trimmingWhitespace) else { return .failure(.invalidKey) }
        var headers = HTTPHeaders()
        headers.add("Upgrade", "websocket")
        headers.add("Connection", "Upgrade")
        headers.add("Sec-WebSocket-Accept", acceptValue(forKey: keys[0].trimmingWhitespace))
        return .success(HTTPResponse(status: 101, headers: headers))
    }

    /// `base64(SHA-1(key + GUID))` (§4.2.2 item 5.4).
    static func acceptValue(forKey key: String) -> String {
        let input = Array((key + guid).utf8)
        var digest = [UInt8](repeating: 0, count: 20)
        var length: UInt32 = 0
        let hashed = input.withUnsafeBytes { bytes in
            EVP_Digest(bytes.baseAddress, bytes.count, &digest, &length, EVP_sha1(), nil)
        }
        precondition(hashed == 1 && length == 20, "libcrypto SHA-1 failed")
        var encoded = [UInt8](repeating: 0, count: 29)  // 4 * ceil(20 / 3) + NUL
        let written = EVP_EncodeBlock(&encoded, digest, 20)
        return String(decoding: encoded[0..<Int(written)], as: UTF8.self)
    }

    /// A nonce of 16 bytes in base64 (§4.1): 22 base64 characters then `==`.
    static func isValidKey(_ key: String) -> Bool {
        let bytes = Array(key.utf8)
        guard bytes.count == 24, bytes[22] == UInt8(ascii: "="), bytes[23] == UInt8(ascii: "=") else { return false }
        return bytes[0..<22].allSatisfy { byte in
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                 UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "+"), UInt8(ascii: "/"): return true
            default: return false
            }
        }
    }

    /// Whether a comma-separated header value lists `token` (case-insensitive, RFC 9110 §7.8).
    static func hasToken(_ value: String, _ token: String) -> Bool {
        value.split(separator: ",").contains { $0.trimmingWhitespace.lowercased() == token }
    }
}

extension StringProtocol {
    /// Without leading and trailing spaces and tabs (HTTP's OWS).
    var trimmingWhitespace: String {
        var text = Substring(self)
        while let first = text.first, first == " " || first == "\t" { text.removeFirst() }
        while let last = text.last, last == " " || last == "\t" { text.removeLast() }
        return String(text)
    }
}
