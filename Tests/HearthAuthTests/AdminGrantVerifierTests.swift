import HearthJSON
import Testing
@testable import HearthAuth

/// The admin grant at the unit level: the refusals decided before a signature is
/// checked, and which `aud` is accepted. Signed assertions (accepted, expired, too long,
/// wrong `aud`) are covered end to end with firebase-admin (AdminWritebackEndToEndTests).
@Suite struct AdminGrantVerifierTests {
    static let verifier = AdminGrantVerifier(accounts: [], clock: UnixClock { 1_795_560_000 })

    static func jwt(_ header: JSONValue, _ claims: JSONValue) -> String {
        Base64.urlEncode(JSONWriter.write(header)) + "." + Base64.urlEncode(JSONWriter.write(claims)) + ".c2ln"
    }

    @Test func refusalsBeforeTheSignature() {
        #expect(throws: AdminGrantVerifier.Failure.malformed) { try Self.verifier.verify("nope") }
        #expect(throws: AdminGrantVerifier.Failure.malformed) {
            try Self.verifier.verify(String(repeating: "a", count: TokenVerifier.maxTokenBytes + 1))
        }
        #expect(throws: AdminGrantVerifier.Failure.unsupportedAlgorithm) {
            try Self.verifier.verify(Self.jwt(["alg": "none"], ["iss": "a@b"]))
        }
        #expect(throws: AdminGrantVerifier.Failure.unsupportedAlgorithm) {
            try Self.verifier.verify(Self.jwt(["alg": "HS256"], ["iss": "a@b"]))
        }
        #expect(throws: AdminGrantVerifier.Failure.unknownSigner) {
            try Self.verifier.verify(Self.jwt(["alg": "RS256", "kid": "k"], ["iss": "a@b"]))
        }
        #expect(throws: AdminGrantVerifier.Failure.malformed) {
            try Self.verifier.verify(Self.jwt(["alg": "RS256", "crit": ["x"]], ["iss": "a@b"]))
        }
    }

    @Test(arguments: [
        ("https://oauth2.googleapis.com/token", true),
        ("https://hearth.example.com/oauth2/v4/token", true),
        ("http://127.0.0.1:9000/oauth2/v4/token", true),
        ("https://hearth.example.com/base/oauth2/v4/token", false),
        ("https://oauth2.googleapis.com/token/", false),
        ("https://evil.example.com?x=/oauth2/v4/token", false),
        ("https://user@evil.example.com/oauth2/v4/token", false),
        ("https:///oauth2/v4/token", false),
        ("/oauth2/v4/token", false),
        ("ftp://h/oauth2/v4/token", false),
        ("", false),
    ])
    func audience(_ audience: String, _ accepted: Bool) {
        #expect(AdminGrantVerifier.acceptsAudience(audience) == accepted)
    }
}
