import HearthJSON
import HearthTesting
import Testing
@testable import HearthAuth

/// Identity providers' keys and ID tokens, from literals and keys made here.
@Suite struct ProviderTokenVerifierTests {
    static let provider = Result { try TestOpenIDProvider() }

    static func jwk(_ members: [String: String]) -> JSONValue {
        .object(Dictionary(uniqueKeysWithValues: members.map { (JSONKey($0.key), JSONValue.string($0.value)) }))
    }

    func verifier(_ provider: TestOpenIDProvider, now: Int64) -> ProviderTokenVerifier {
        var keys: [String: ProviderKey] = [:]
        for key in [provider.rsa, provider.ec] { keys[key.kid] = ProviderKey(jwk: Self.jwk(key.jwk)) }
        return ProviderTokenVerifier(keys: keys, issuers: [provider.issuer], audiences: ["com.example.app"], clock: UnixClock { now })
    }

    @Test func keysOfOtherTypesCurvesUsesOrAlgorithmsAreSkipped() throws {
        let provider = try Self.provider.get()
        #expect(ProviderKey(jwk: Self.jwk(provider.rsa.jwk))?.algorithm == .rs256)
        #expect(ProviderKey(jwk: Self.jwk(provider.ec.jwk))?.algorithm == .es256)
        var encryption = provider.rsa.jwk
        encryption["use"] = "enc"
        #expect(ProviderKey(jwk: Self.jwk(encryption)) == nil)
        var otherCurve = provider.ec.jwk
        otherCurve["crv"] = "P-384"
        #expect(ProviderKey(jwk: Self.jwk(otherCurve)) == nil)
        var wrongAlg = provider.rsa.jwk
        wrongAlg["alg"] = "PS256"
        #expect(ProviderKey(jwk: Self.jwk(wrongAlg)) == nil)
        var noKid = provider.rsa.jwk
        noKid.removeValue(forKey: "kid")
        #expect(ProviderKey(jwk: Self.jwk(noKid)) == nil)
        #expect(ProviderKey(jwk: Self.jwk(["kty": "oct", "k": "c2VjcmV0", "kid": "h"])) == nil)
        // A 1024-bit modulus is refused (RFC 7518 §3.3).
        var small = provider.rsa.jwk
        small["n"] = TestOpenIDProvider.Key.b64([0xC1] + [UInt8](repeating: 0x35, count: 127))
        #expect(ProviderKey(jwk: Self.jwk(small)) == nil)
        // A point not on the curve is refused.
        var offCurve = provider.ec.jwk
        offCurve["y"] = TestOpenIDProvider.Key.b64([UInt8](repeating: 7, count: 32))
        #expect(ProviderKey(jwk: Self.jwk(offCurve)) == nil)
    }

    @Test func aCertificateGivesItsRSAKey() throws {
        let provider = try Self.provider.get()
        let key = try #require(ProviderKey(certificatePEM: provider.rsa.certificatePEM, kid: "c1"))
        #expect(key.algorithm == .rs256 && key.kid == "c1")
        #expect(ProviderKey(certificatePEM: "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n", kid: "c2") == nil)
        #expect(ProviderKey(certificatePEM: provider.ec.certificatePEM, kid: "c3") == nil)  // Firebase's keys are RSA
    }

    @Test func bothAlgorithmsVerifyAndAKeyIsNeverUsedWithTheOtherAlgorithm() throws {
        let provider = try Self.provider.get()
        let now = Int64(1_800_000_000)
        let verifier = verifier(provider, now: now)
        #expect(try verifier.verify(provider.mint(now: Int(now)))["sub"] == "provider-user-1")
        #expect(try verifier.verify(provider.mint(key: provider.ec, now: Int(now)))["sub"] == "provider-user-1")
        // The EC key's kid with alg RS256 (and the other way round): refused, not verified with the wrong algorithm.
        #expect(throws: ProviderTokenFailure.badSignature) { try verifier.verify(provider.mint(key: provider.ec, header: ["alg": "RS256"], now: Int(now))) }
        #expect(throws: ProviderTokenFailure.badSignature) { try verifier.verify(provider.mint(header: ["kid": "ec-1"], now: Int(now))) }
    }

    @Test func audienceMayBeAnArrayAndTheClockSkewIsAllowedBothWays() throws {
        let provider = try Self.provider.get()
        let now = Int64(1_800_000_000)
        let verifier = verifier(provider, now: now)
        #expect(try verifier.verify(provider.mint(overrides: ["aud": ["other", "com.example.app"]], now: Int(now)))["sub"] == "provider-user-1")
        let skew = Int(ProviderTokenVerifier.clockSkew)
        #expect(try verifier.verify(provider.mint(overrides: ["exp": Int(now) - skew + 1], now: Int(now) - 600))["sub"] == "provider-user-1")
        #expect(throws: ProviderTokenFailure.expired) { try verifier.verify(provider.mint(overrides: ["exp": Int(now) - skew], now: Int(now) - 600)) }
        #expect(try verifier.verify(provider.mint(now: Int(now) + skew))["sub"] == "provider-user-1")
        #expect(throws: ProviderTokenFailure.issuedInFuture) { try verifier.verify(provider.mint(now: Int(now) + skew + 1)) }
    }

    /// A Firebase project's ID tokens (`maxLifetime` set) live at most an hour plus the
    /// skew, as Firebase issues them; other providers' tokens are not capped.
    @Test func aCappedLifetimeRefusesLongerLivedTokens() throws {
        let provider = try Self.provider.get()
        let now = Int64(1_800_000_000)
        var keys: [String: ProviderKey] = [:]
        keys[provider.rsa.kid] = ProviderKey(jwk: Self.jwk(provider.rsa.jwk))
        let capped = ProviderTokenVerifier(keys: keys, issuers: [provider.issuer], audiences: ["com.example.app"], clock: UnixClock { now },
                                           maxLifetime: ProviderTokenVerifier.firebaseProjectMaxLifetime)
        let issued = Int(now) - 10
        #expect(try capped.verify(provider.mint(overrides: ["exp": issued + 3600], now: issued))["sub"] == "provider-user-1")
        #expect(try capped.verify(provider.mint(overrides: ["exp": issued + 3660], now: issued))["sub"] == "provider-user-1", "the skew")
        #expect(throws: ProviderTokenFailure.lifetimeTooLong) { try capped.verify(provider.mint(overrides: ["exp": issued + 3661], now: issued)) }
        let tenYears = 10 * 365 * 24 * 3600
        #expect(throws: ProviderTokenFailure.lifetimeTooLong) { try capped.verify(provider.mint(overrides: ["exp": issued + tenYears], now: issued)) }
        #expect(throws: ProviderTokenFailure.lifetimeTooLong) { try capped.verify(provider.mint(overrides: ["exp": Int(now) + 10, "iat": Int(now) + 50], now: issued)) }
        #expect(throws: ProviderTokenFailure.lifetimeTooLong) { try capped.verify(provider.mint(overrides: ["exp": Int64.max, "iat": -Int64.max], now: issued)) }
        #expect(ProviderTokenFailure.lifetimeTooLong.description == "the id_token lives longer than its issuer's tokens may")
        // Uncapped (a provider's sign-in token): ten years pass this check.
        #expect(try verifier(provider, now: now).verify(provider.mint(overrides: ["exp": issued + tenYears], now: issued))["sub"] == "provider-user-1")
    }

    @Test func aTokenLongerThanTheLimitIsMalformed() throws {
        let provider = try Self.provider.get()
        let long = provider.mint(overrides: ["pad": String(repeating: "x", count: TokenVerifier.maxTokenBytes)])
        #expect(throws: ProviderTokenFailure.malformed) { try verifier(provider, now: 0).verify(long) }
    }

    @Test func keySetsNeedAUsableKey() throws {
        let provider = try Self.provider.get()
        #expect(ProviderKeySet.keys(jwks: Array(#"{"keys": []}"#.utf8)) == nil)
        #expect(ProviderKeySet.keys(jwks: Array(#"{"nokeys": 1}"#.utf8)) == nil)
        #expect(ProviderKeySet.keys(certificates: Array(#"{"a": "not a certificate"}"#.utf8)) == nil)
        let document = JSONWriter.string(["a": .string(provider.rsa.certificatePEM)])
        #expect(ProviderKeySet.keys(certificates: Array(document.utf8))?.keys.sorted() == ["a"])
    }
}
