import HearthJSON
import Testing
@testable import HearthAuth

@Suite("TokenSigner")
struct TokenSignerTests {
    @Test func roundTrip() throws {
        let key = Fixture.key()
        let claims: JSONValue = ["sub": "user-1", "iat": .int(Fixture.now), "exp": .int(Fixture.now + 3600), "extra": ["a": [1, true]]]
        let token = try TokenSigner(key: key).sign(claims: claims)
        #expect(try Fixture.verifier().verify(token) == claims)
    }

    @Test func producesTheDocumentedHeader() throws {
        let key = Fixture.key()
        let token = try TokenSigner(key: key).sign(claims: .object(Fixture.claims()))
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        #expect(parts.count == 3)
        let header = try #require(Base64.decode(parts[0], alphabet: .url, padding: .none))
        #expect(String(decoding: header, as: UTF8.self) == #"{"alg":"EdDSA","kid":"\#(key.kid)","typ":"JWT"}"#)
        let signature = try #require(Base64.decode(parts[2], alphabet: .url, padding: .none))
        #expect(signature.count == 64)
        #expect(key.verifyingKey.isValidSignature(signature, for: Array("\(parts[0]).\(parts[1])".utf8)))
    }

    @Test func isDeterministic() throws {
        let signer = TokenSigner(key: Fixture.key())
        let claims = JSONValue.object(Fixture.claims())
        #expect(try signer.sign(claims: claims) == signer.sign(claims: claims))
    }

    @Test func rotationVerifiesOldAndNewKeys() throws {
        let old = Fixture.key()
        let new = Fixture.otherKey()
        let claims = JSONValue.object(Fixture.claims())
        let oldToken = try TokenSigner(key: old).sign(claims: claims)
        let newToken = try TokenSigner(key: new).sign(claims: claims)
        let verifier = Fixture.verifier([new, old])
        #expect(try verifier.verify(oldToken) == claims)
        #expect(try verifier.verify(newToken) == claims)
        #expect(throws: TokenError.unknownKeyID) { try Fixture.verifier([new]).verify(oldToken) }
    }

    @Test func rejectsNonObjectClaims() {
        #expect(throws: TokenSigningError.claimsNotAnObject) { try TokenSigner(key: Fixture.key()).sign(claims: ["a", "b"]) }
    }

    @Test func refusesTokensNoVerifierWouldAccept() throws {
        let signer = TokenSigner(key: Fixture.key())
        var claims = Fixture.claims()
        claims["pad"] = .string(String(repeating: "x", count: TokenVerifier.maxTokenBytes))
        #expect(throws: TokenSigningError.tooLarge) { try signer.sign(claims: .object(claims)) }
        // The largest token the signer makes is still accepted.
        var size = 0
        var padding = 5000
        while true {
            claims["pad"] = .string(String(repeating: "x", count: padding))
            guard let token = try? signer.sign(claims: .object(claims)) else { break }
            size = token.utf8.count
            padding += 1
        }
        #expect(size > TokenVerifier.maxTokenBytes - 4)
        claims["pad"] = .string(String(repeating: "x", count: padding - 1))
        _ = try Fixture.verifier().verify(try signer.sign(claims: .object(claims)))
    }
}
