import HearthJSON
import Testing
@testable import HearthAuth

/// Custom tokens at the unit level: Hearth-minted (EdDSA) tokens round-trip, and
/// each refusal is its own failure. RS256 and firebase-admin's tokens are covered end to end
/// (CustomTokenEndToEndTests). A fixed clock: no sleeps.
@Suite struct CustomTokenVerifierTests {
    static let now: Int64 = 1_795_560_000

    static func verifier(_ key: SigningKey, at time: Int64 = now, allowUnsigned: Bool = false) -> CustomTokenVerifier {
        CustomTokenVerifier(hearthKeys: [key.kid: key.verifyingKey], serviceAccounts: [], allowUnsigned: allowUnsigned,
                            reservedClaims: IDTokenClaims.reservedClaimNames.union(["hearth_admin"]), clock: UnixClock { time })
    }

    static func unsigned(_ claims: [JSONKey: JSONValue]) -> String {
        Base64.urlEncode(JSONWriter.write(["alg": "none", "typ": "JWT"])) + "." + Base64.urlEncode(JSONWriter.write(.object(claims))) + "."
    }

    static func claims(uid: String = "u1", iat: Int64 = now, exp: Int64 = now + 3600, iss: String = "firebase-auth-emulator@example.com") -> [JSONKey: JSONValue] {
        ["iss": .string(iss), "sub": .string(iss), "aud": .string(CustomTokenVerifier.audience), "uid": .string(uid), "iat": .int(iat), "exp": .int(exp)]
    }

    @Test func aHearthMintedTokenRoundTripsWithItsClaims() throws {
        let key = try SigningKey.generate()
        let token = try CustomTokenVerifier.mint(uid: "alice", claims: ["premium": true], key: key, now: Self.now)
        let verified = try Self.verifier(key).verify(token)
        #expect(verified == CustomTokenVerifier.Verified(uid: "alice", claims: ["premium": true]))
        // Usable until it expires (with the leeway), then not.
        _ = try Self.verifier(key, at: Self.now + CustomTokenVerifier.maxLifetime - 1).verify(token)
        #expect(throws: CustomTokenVerifier.Failure.expired) {
            try Self.verifier(key, at: Self.now + CustomTokenVerifier.maxLifetime + TokenVerifier.defaultLeeway).verify(token)
        }
        // Another Hearth's key (a different kid) is no signer here.
        #expect(throws: CustomTokenVerifier.Failure.unknownSigner) { try Self.verifier(try SigningKey.generate()).verify(token) }
    }

    @Test func eachRefusalHasItsReason() throws {
        let key = try SigningKey.generate()
        let verifier = Self.verifier(key), emulator = Self.verifier(key, allowUnsigned: true)
        #expect(throws: CustomTokenVerifier.Failure.unsignedNotAllowed) { try verifier.verify(Self.unsigned(Self.claims())) }
        #expect(try emulator.verify(Self.unsigned(Self.claims())).uid == "u1")
        var wrongAudience = Self.claims()
        wrongAudience["aud"] = "demo-hearth"
        #expect(throws: CustomTokenVerifier.Failure.wrongAudience) { try emulator.verify(Self.unsigned(wrongAudience)) }
        var notSubject = Self.claims()
        notSubject["sub"] = "someone-else"
        #expect(throws: CustomTokenVerifier.Failure.issuerIsNotSubject) { try emulator.verify(Self.unsigned(notSubject)) }
        #expect(throws: CustomTokenVerifier.Failure.lifetimeTooLong) {
            try emulator.verify(Self.unsigned(Self.claims(exp: Self.now + CustomTokenVerifier.maxLifetime + 1)))
        }
        #expect(throws: CustomTokenVerifier.Failure.issuedInFuture) {
            try emulator.verify(Self.unsigned(Self.claims(iat: Self.now + TokenVerifier.defaultLeeway + 1, exp: Self.now + 3600)))
        }
        #expect(throws: CustomTokenVerifier.Failure.missingUID) { try emulator.verify(Self.unsigned(Self.claims(uid: ""))) }
        #expect(throws: CustomTokenVerifier.Failure.missingUID) {
            try emulator.verify(Self.unsigned(Self.claims(uid: String(repeating: "x", count: CustomTokenVerifier.maxUIDLength + 1))))
        }
        var reserved = Self.claims()
        reserved["claims"] = ["firebase": ["x": 1]]
        #expect(throws: CustomTokenVerifier.Failure.reservedClaim("firebase")) { try emulator.verify(Self.unsigned(reserved)) }
        var admin = Self.claims()
        admin["claims"] = ["hearth_admin": true]
        #expect(throws: CustomTokenVerifier.Failure.reservedClaim("hearth_admin")) { try emulator.verify(Self.unsigned(admin)) }
        var large = Self.claims()
        large["claims"] = ["blob": .string(String(repeating: "a", count: IDTokenClaims.maxCustomClaimsBytes))]
        #expect(throws: CustomTokenVerifier.Failure.claimsTooLarge) { try emulator.verify(Self.unsigned(large)) }
        let hs256 = Base64.urlEncode(JSONWriter.write(["alg": "HS256"])) + "." + Base64.urlEncode(JSONWriter.write(.object(Self.claims()))) + ".c2ln"
        #expect(throws: CustomTokenVerifier.Failure.unsupportedAlgorithm) { try emulator.verify(hs256) }
        #expect(throws: CustomTokenVerifier.Failure.malformed) { try emulator.verify("a.b") }
        #expect(throws: CustomTokenVerifier.Failure.malformed) {
            try emulator.verify(String(repeating: "a", count: TokenVerifier.maxTokenBytes + 1))
        }
        // A tampered Hearth token.
        let token = try CustomTokenVerifier.mint(uid: "alice", claims: [:], key: key, now: Self.now)
        let parts = token.split(separator: ".").map(String.init)
        var payload = Self.claims(uid: "mallory", iss: CustomTokenVerifier.hearthIssuer)
        payload["iat"] = .int(Self.now)
        let forged = parts[0] + "." + Base64.urlEncode(JSONWriter.write(.object(payload))) + "." + parts[2]
        #expect(throws: CustomTokenVerifier.Failure.badSignature) { try verifier.verify(forged) }
    }

    @Test func rsaKeysAreCheckedWhenRead() {
        #expect(throws: RS256Key.KeyError.unreadable) { try RS256Key(pem: "nope") }
        #expect(throws: RS256Key.KeyError.unreadable) { try RS256Key(pem: "") }
        #expect(throws: ServiceAccountKey.Failure.notJSON) { try ServiceAccountKey(json: Array("[]".utf8)) }
        #expect(throws: ServiceAccountKey.Failure.missing("client_email")) { try ServiceAccountKey(json: Array("{}".utf8)) }
    }
}
