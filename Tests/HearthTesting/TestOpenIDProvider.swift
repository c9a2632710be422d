import COpenSSL
import Foundation
import Synchronization

/// A small OpenID Connect issuer for tests: its own RSA and EC P-256 keys,
/// a discovery document, a JWKS and Google's certificate format over HTTP on 127.0.0.1
/// (port 0), and ID tokens minted with either key. Keys rotate on request; the JWKS can
/// be made to hang (a provider that is down), and fetches are counted.
public final class TestOpenIDProvider: Sendable {
    public final class Key: @unchecked Sendable {
        // @unchecked: the EVP_PKEY is never mutated after init; each signing has its own
        // EVP_MD_CTX, which libcrypto allows from several threads. Freed in deinit.
        let pkey: OpaquePointer
        public let kid: String
        public let isEC: Bool

        init(ec: Bool, kid: String) {
            let context = EVP_PKEY_CTX_new_id(ec ? EVP_PKEY_EC : EVP_PKEY_RSA, nil)!
            defer { EVP_PKEY_CTX_free(context) }
            precondition(EVP_PKEY_keygen_init(context) == 1)
            if ec {
                precondition(EVP_PKEY_CTX_set_ec_paramgen_curve_nid(context, NID_X9_62_prime256v1) == 1)
            } else {
                precondition(EVP_PKEY_CTX_set_rsa_keygen_bits(context, 2048) == 1)
            }
            var key: OpaquePointer?
            precondition(EVP_PKEY_keygen(context, &key) == 1)
            (pkey, self.kid, isEC) = (key!, kid, ec)
        }

        deinit { EVP_PKEY_free(pkey) }

        public var alg: String { isEC ? "ES256" : "RS256" }

        /// The public key as a JWK.
        public var jwk: [String: String] {
            if isEC {
                let point = publicKeyDER.suffix(64)
                return ["kty": "EC", "crv": "P-256", "x": Self.b64(point.prefix(32)), "y": Self.b64(point.suffix(32)),
                        "kid": kid, "alg": "ES256", "use": "sig"]
            }
            return ["kty": "RSA", "n": Self.b64(bignum("n")), "e": Self.b64(bignum("e")), "kid": kid, "alg": "RS256", "use": "sig"]
        }

        var publicKeyDER: [UInt8] {
            let length = i2d_PUBKEY(pkey, nil)
            var bytes = [UInt8](repeating: 0, count: Int(length))
            bytes.withUnsafeMutableBufferPointer { buffer in
                var cursor: UnsafeMutablePointer<UInt8>? = buffer.baseAddress
                _ = i2d_PUBKEY(pkey, &cursor)
            }
            return bytes
        }

        func bignum(_ name: String) -> [UInt8] {
            var bn: OpaquePointer?
            precondition(EVP_PKEY_get_bn_param(pkey, name, &bn) == 1)
            defer { BN_free(bn) }
            var bytes = [UInt8](repeating: 0, count: Int((BN_num_bits(bn) + 7) / 8))
            _ = BN_bn2bin(bn, &bytes)
            return bytes
        }

        /// A self-signed certificate of the key, PEM (Google's format for Firebase keys).
        public var certificatePEM: String {
            let certificate = X509_new()!
            defer { X509_free(certificate) }
            X509_set_version(certificate, 2)
            ASN1_INTEGER_set(X509_get_serialNumber(certificate), 1)
            X509_gmtime_adj(X509_getm_notBefore(certificate), -3600)
            X509_gmtime_adj(X509_getm_notAfter(certificate), 86_400)
            let name = X509_get_subject_name(certificate)
            X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, Array("test".utf8), -1, -1, 0)
            X509_set_issuer_name(certificate, name)
            X509_set_pubkey(certificate, pkey)
            precondition(X509_sign(certificate, pkey, EVP_sha256()) > 0)
            let bio = BIO_new(BIO_s_mem())!
            defer { BIO_free(bio) }
            PEM_write_bio_X509(bio, certificate)
            var pointer: UnsafeMutablePointer<CChar>?
            let length = BIO_ctrl(bio, BIO_CTRL_INFO, 0, &pointer)
            return String(decoding: UnsafeRawBufferPointer(start: pointer, count: Int(length)), as: UTF8.self)
        }

        /// The JOSE signature of `message`: PKCS #1 v1.5, or `r || s` for ES256.
        func sign(_ message: [UInt8]) -> [UInt8] {
            let context = EVP_MD_CTX_new()!
            defer { EVP_MD_CTX_free(context) }
            precondition(EVP_DigestSignInit(context, nil, EVP_sha256(), nil, pkey) == 1)
            var length = 0
            precondition(EVP_DigestSign(context, nil, &length, message, message.count) == 1)
            var signature = [UInt8](repeating: 0, count: length)
            precondition(EVP_DigestSign(context, &signature, &length, message, message.count) == 1)
            signature.removeLast(signature.count - length)
            guard isEC else { return signature }
            // DER SEQUENCE { INTEGER r, INTEGER s } to 32-byte r || s.
            var index = 2 + (signature[1] & 0x80 != 0 ? Int(signature[1] & 0x7F) : 0)
            func integer() -> [UInt8] {
                let count = Int(signature[index + 1])
                let bytes = Array(signature[(index + 2)..<(index + 2 + count)].drop { $0 == 0 })
                index += 2 + count
                return [UInt8](repeating: 0, count: 32 - bytes.count) + bytes
            }
            return integer() + integer()
        }

        public static func b64(_ bytes: some Collection<UInt8>) -> String {
            Data(bytes).base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
                .replacingOccurrences(of: "=", with: "")
        }
    }

    private struct State {
        var published: [Key]
        var hang = false
        var jwksFetches = 0
        var certificateFetches = 0
        var issuer = ""
    }

    private final class Shared: Sendable {
        let state: Mutex<State>
        init(_ state: State) { self.state = Mutex(state) }
    }

    public let rsa: Key
    public let ec: Key
    private let shared: Shared
    private let listener: Mutex<LoopbackListener?> = Mutex(nil)
    public let port: Int
    public var issuer: String { "http://127.0.0.1:\(port)" }
    public var jwksURL: String { issuer + "/jwks" }
    public var certificatesURL: String { issuer + "/certs" }
    /// Released when the test ends, so a hanging answer gives up.
    private let released = DispatchSemaphore(value: 0)

    public init() throws {
        let rsa = Key(ec: false, kid: "rsa-1"), ec = Key(ec: true, kid: "ec-1")
        (self.rsa, self.ec) = (rsa, ec)
        let shared = Shared(State(published: [rsa, ec]))
        self.shared = shared
        let released = self.released
        let listener = try LoopbackListener { socket in
            guard let request = socket.readRequest() else { return }
            let path = request.target.split(separator: "?").first.map(String.init) ?? request.target
            let (keys, hang, issuer) = shared.state.withLock { state -> ([Key], Bool, String) in
                if path == "/jwks" { state.jwksFetches += 1 }
                if path == "/certs" { state.certificateFetches += 1 }
                return (state.published, state.hang, state.issuer)
            }
            if hang && path != "/.well-known/openid-configuration" {
                _ = released.wait(timeout: .now() + 60)
                return
            }
            switch path {
            case "/.well-known/openid-configuration":
                try? socket.respond(200, Self.json(["issuer": issuer, "jwks_uri": issuer + "/jwks",
                                                    "id_token_signing_alg_values_supported": ["RS256", "ES256"]]))
            case "/jwks":
                try? socket.respond(200, Self.json(["keys": keys.map(\.jwk)]), headers: [("Content-Type", "application/json")])
            case "/certs":
                try? socket.respond(200, Self.json(Dictionary(uniqueKeysWithValues: keys.filter { !$0.isEC }.map { ($0.kid, $0.certificatePEM) })))
            default:
                try? socket.respond(404, "{}")
            }
        }
        port = listener.port
        shared.state.withLock { $0.issuer = "http://127.0.0.1:\(listener.port)" }
        self.listener.withLock { $0 = listener }
    }

    deinit {
        released.signal()
        listener.withLock { $0?.stop() }
    }

    /// Replaces the published keys (key rotation).
    public func publish(_ keys: [Key]) { shared.state.withLock { $0.published = keys } }
    /// Makes the key endpoints never answer (a provider that is down or slow).
    public func hang(_ on: Bool) { shared.state.withLock { $0.hang = on } }
    public var jwksFetches: Int { shared.state.withLock { $0.jwksFetches } }
    public var certificateFetches: Int { shared.state.withLock { $0.certificateFetches } }

    /// A new key (for rotation), not yet published.
    public static func newKey(ec: Bool, kid: String) -> Key { Key(ec: ec, kid: kid) }

    /// An ID token signed by `key` with the usual claims for `sub` and `audience`, then
    /// `overrides` (a nil value removes a claim). `header` overrides header members.
    public func mint(sub: String = "provider-user-1", audience: String = "com.example.app", key: Key? = nil,
                     overrides: [String: Any?] = [:], header: [String: String] = [:], now: Int = Int(Date().timeIntervalSince1970)) -> String {
        let key = key ?? rsa
        var claims: [String: Any] = ["iss": issuer, "aud": audience, "sub": sub, "iat": now, "exp": now + 3600,
                                     "email": "\(sub)@example.com", "email_verified": true, "name": "Provider User"]
        for (name, value) in overrides {
            if let value { claims[name] = value } else { claims.removeValue(forKey: name) }
        }
        var head: [String: String] = ["alg": key.alg, "kid": key.kid, "typ": "JWT"]
        head.merge(header) { $1 }
        let input = Key.b64(Array(Self.json(head).utf8)) + "." + Key.b64(Array(Self.json(claims).utf8))
        return input + "." + Key.b64(key.sign(Array(input.utf8)))
    }

    /// SHA-256 of `text` in lower-case hex (Apple's nonce claim).
    public static func sha256Hex(_ text: String) -> String {
        var digest = [UInt8](repeating: 0, count: 32)
        var length: UInt32 = 0
        let input = Array(text.utf8)
        _ = EVP_Digest(input, input.count, &digest, &length, EVP_sha256(), nil)
        return digest.map { String(format: "%02x", $0) }.joined()
    }

    static func json(_ value: Any) -> String {
        String(decoding: try! JSONSerialization.data(withJSONObject: value, options: [.sortedKeys]), as: UTF8.self)
    }
}
