import HearthJSON
import Testing
@testable import HearthAuth

/// Every rejection `TokenVerifier` makes, one distinct `TokenError` each.
@Suite("TokenVerifier rejections")
struct TokenVerifierTests {
    let verifier = Fixture.verifier()

    func valid(_ claims: [String: JSONValue] = Fixture.claims()) -> String {
        try! TokenSigner(key: Fixture.key()).sign(claims: .object(claims))
    }

    // MARK: Shape

    @Test func oversizedTokens() {
        let token = String(repeating: "a", count: TokenVerifier.maxTokenBytes + 1)
        #expect(throws: TokenError.tooLarge) { try verifier.verify(token) }
        // At the limit the size check passes and the next check decides.
        let atLimit = String(repeating: "a", count: TokenVerifier.maxTokenBytes)
        #expect(throws: TokenError.wrongPartCount) { try verifier.verify(atLimit) }
    }

    @Test(arguments: ["", "abc", "a.b", "a.b.c.d", "....", "a..b.c"])
    func wrongPartCount(token: String) {
        #expect(throws: TokenError.wrongPartCount) { try verifier.verify(token) }
    }

    @Test func badBase64InEachPart() {
        let parts = valid().split(separator: ".").map(String.init)
        #expect(throws: TokenError.badBase64(.header)) { try verifier.verify("\(parts[0])=.\(parts[1]).\(parts[2])") }
        #expect(throws: TokenError.badBase64(.header)) { try verifier.verify("e+J.\(parts[1]).\(parts[2])") }
        #expect(throws: TokenError.badBase64(.payload)) { try verifier.verify("\(parts[0]).\(parts[1])!.\(parts[2])") }
        #expect(throws: TokenError.badBase64(.signature)) { try verifier.verify("\(parts[0]).\(parts[1]).\(parts[2])==") }
        // An empty part is valid (empty) base64url; it then fails as JSON.
        #expect(throws: TokenError.badJSON(.header)) { try verifier.verify(".\(parts[1]).\(parts[2])") }
    }

    @Test func badJSON() {
        let token = Fixture.forge(headerBytes: Array(#"{"alg":"EdDSA","kid":"#.utf8), payloadBytes: JSONWriter.write(.object(Fixture.claims())))
        #expect(throws: TokenError.badJSON(.header)) { try verifier.verify(token) }
        // A correctly signed payload that is not JSON.
        let payload = Fixture.forge(headerBytes: JSONWriter.write(Fixture.header()), payloadBytes: Array("{sub:1}".utf8))
        #expect(throws: TokenError.badJSON(.payload)) { try verifier.verify(payload) }
    }

    @Test func partsMustBeObjects() {
        let header = Fixture.forge(header: ["EdDSA"], payload: .object(Fixture.claims()))
        #expect(throws: TokenError.notAnObject(.header)) { try verifier.verify(header) }
        let payload = Fixture.forge(header: Fixture.header(), payload: 42)
        #expect(throws: TokenError.notAnObject(.payload)) { try verifier.verify(payload) }
    }

    // MARK: Algorithm and key

    @Test func algNone() {
        let token = Fixture.forge(header: ["alg": "none", "typ": "JWT"], payload: .object(Fixture.claims()), key: nil)
        #expect(token.hasSuffix("."))
        #expect(throws: TokenError.unsupportedAlgorithm) { try verifier.verify(token) }
        // Even with our kid and a real signature.
        let withKid = Fixture.forge(header: ["alg": "none", "kid": .string(Fixture.key().kid)], payload: .object(Fixture.claims()))
        #expect(throws: TokenError.unsupportedAlgorithm) { try verifier.verify(withKid) }
    }

    /// The classic key-confusion attack: HS256 keyed with the (public) Ed25519 key.
    @Test func hs256WithThePublicKeyAsHMACKey() {
        let key = Fixture.key()
        let header = Base64.urlEncode(JSONWriter.write(["alg": "HS256", "kid": .string(key.kid), "typ": "JWT"]))
        let payload = Base64.urlEncode(JSONWriter.write(.object(Fixture.claims())))
        let input = header + "." + payload
        for hmacKey in [key.verifyingKey.rawRepresentation, Array(Base64.urlEncode(key.verifyingKey.rawRepresentation).utf8),
                        JSONWriter.write(key.verifyingKey.jwk)] {
            let token = input + "." + Base64.urlEncode(hmacSHA256(key: hmacKey, message: Array(input.utf8)))
            #expect(throws: TokenError.unsupportedAlgorithm) { try verifier.verify(token) }
        }
    }

    @Test(arguments: ["HS256", "RS256", "ES256", "eddsa", "Ed25519", ""] as [JSONValue] + [.null, 1, ["EdDSA"]])
    func otherAlgorithms(alg: JSONValue) {
        let token = Fixture.forge(header: ["alg": alg, "kid": .string(Fixture.key().kid)], payload: .object(Fixture.claims()))
        #expect(throws: TokenError.unsupportedAlgorithm) { try verifier.verify(token) }
    }

    @Test func missingAlg() {
        let token = Fixture.forge(header: ["kid": .string(Fixture.key().kid)], payload: .object(Fixture.claims()))
        #expect(throws: TokenError.unsupportedAlgorithm) { try verifier.verify(token) }
    }

    @Test func criticalHeaders() {
        let token = Fixture.forge(header: ["alg": "EdDSA", "kid": .string(Fixture.key().kid), "crit": ["exp"]], payload: .object(Fixture.claims()))
        #expect(throws: TokenError.unsupportedCriticalHeader) { try verifier.verify(token) }
    }

    @Test func missingKid() {
        let token = Fixture.forge(header: ["alg": "EdDSA", "typ": "JWT"], payload: .object(Fixture.claims()))
        #expect(throws: TokenError.missingKeyID) { try verifier.verify(token) }
        let numeric = Fixture.forge(header: ["alg": "EdDSA", "kid": 7], payload: .object(Fixture.claims()))
        #expect(throws: TokenError.missingKeyID) { try verifier.verify(numeric) }
    }

    @Test func unknownKid() {
        let token = Fixture.forge(header: Fixture.header(kid: "not-a-key"), payload: .object(Fixture.claims()))
        #expect(throws: TokenError.unknownKeyID) { try verifier.verify(token) }
        let other = try! TokenSigner(key: Fixture.otherKey()).sign(claims: .object(Fixture.claims()))
        #expect(throws: TokenError.unknownKeyID) { try verifier.verify(other) }
        #expect(throws: TokenError.unknownKeyID) { try TokenVerifier(publicKeys: [:], clock: Fixture.clock).verify(valid()) }
    }

    // MARK: Signature

    @Test func tamperedHeader() {
        let parts = valid().split(separator: ".").map(String.init)
        let header = Base64.urlEncode(JSONWriter.write(["alg": "EdDSA", "kid": .string(Fixture.key().kid), "typ": "JWS"]))
        #expect(throws: TokenError.badSignature) { try verifier.verify("\(header).\(parts[1]).\(parts[2])") }
    }

    @Test func tamperedPayload() {
        let parts = valid().split(separator: ".").map(String.init)
        let payload = Base64.urlEncode(JSONWriter.write(.object(Fixture.claims(sub: "admin"))))
        #expect(throws: TokenError.badSignature) { try verifier.verify("\(parts[0]).\(payload).\(parts[2])") }
    }

    @Test func tamperedSignature() {
        let parts = valid().split(separator: ".").map(String.init)
        var signature = Base64.decode(parts[2], alphabet: .url, padding: .none)!
        for index in [0, 40, 63] {
            var bad = signature
            bad[index] ^= 0x80
            #expect(throws: TokenError.badSignature) { try verifier.verify("\(parts[0]).\(parts[1]).\(Base64.urlEncode(bad))") }
        }
        signature.removeLast()
        #expect(throws: TokenError.badSignature) { try verifier.verify("\(parts[0]).\(parts[1]).\(Base64.urlEncode(signature))") }
        #expect(throws: TokenError.badSignature) { try verifier.verify("\(parts[0]).\(parts[1]).") }
    }

    @Test func signatureByAnotherKeyUnderOurKid() {
        let token = Fixture.forge(header: Fixture.header(), payload: .object(Fixture.claims()), key: Fixture.otherKey())
        #expect(throws: TokenError.badSignature) { try verifier.verify(token) }
    }

    // MARK: Claims

    @Test(arguments: ["sub", "exp", "iat"])
    func missingRequiredClaim(name: String) {
        var claims = Fixture.claims()
        claims[name] = nil
        #expect(throws: TokenError.missingClaim(name)) { try verifier.verify(valid(claims)) }
    }

    @Test(arguments: [("sub", JSONValue.int(5)), ("sub", .null), ("exp", "soon"), ("iat", .bool(true)), ("exp", .null), ("nbf", "now")])
    func wronglyTypedClaim(name: String, value: JSONValue) {
        var claims = Fixture.claims()
        claims[name] = value
        #expect(throws: TokenError.invalidClaim(name)) { try verifier.verify(valid(claims)) }
    }

    @Test func subjectLength() throws {
        #expect(throws: TokenError.invalidSubject) { try verifier.verify(valid(Fixture.claims(sub: ""))) }
        let tooLong = String(repeating: "u", count: TokenVerifier.maxSubjectLength + 1)
        #expect(throws: TokenError.invalidSubject) { try verifier.verify(valid(Fixture.claims(sub: .string(tooLong)))) }
        let longest = String(repeating: "u", count: TokenVerifier.maxSubjectLength)
        _ = try verifier.verify(valid(Fixture.claims(sub: .string(longest))))
        // Counted in UTF-16 code units, as JavaScript verifiers do: 65 emoji are 130 units.
        #expect(throws: TokenError.invalidSubject) { try verifier.verify(valid(Fixture.claims(sub: .string(String(repeating: "😀", count: 65))))) }
    }

    @Test func expiry() throws {
        let leeway = TokenVerifier.defaultLeeway
        let now = Fixture.now
        #expect(throws: TokenError.expired) { try verifier.verify(valid(Fixture.claims(iat: now - 7200, exp: now - 3600))) }
        #expect(throws: TokenError.expired) { try verifier.verify(valid(Fixture.claims(iat: now - 3600, exp: now - leeway))) }
        _ = try verifier.verify(valid(Fixture.claims(iat: now - 3600, exp: now - leeway + 1)))   // within leeway
        // The same token, checked before and after it lapses (injected clock, no sleeping).
        let token = valid(Fixture.claims(iat: now, exp: now + 60))
        _ = try Fixture.verifier(now: now + 60 + leeway - 1).verify(token)
        #expect(throws: TokenError.expired) { try Fixture.verifier(now: now + 60 + leeway).verify(token) }
    }

    @Test func issuedInTheFuture() throws {
        let leeway = TokenVerifier.defaultLeeway
        let now = Fixture.now
        #expect(throws: TokenError.issuedInFuture) { try verifier.verify(valid(Fixture.claims(iat: now + leeway + 1, exp: now + 3600))) }
        _ = try verifier.verify(valid(Fixture.claims(iat: now + leeway, exp: now + 3600)))
    }

    /// A correctly signed token that claims to live longer than Hearth ever issues
    /// (`exp − iat` over `maxLifetime`) is refused, though it is neither expired nor early.
    @Test func lifetimeLongerThanHearthIssues() throws {
        let now = Fixture.now
        let longest = TokenVerifier.maxLifetime
        #expect(longest == 3600)
        _ = try verifier.verify(valid(Fixture.claims(iat: now, exp: now + longest)))
        #expect(throws: TokenError.lifetimeTooLong) { try verifier.verify(valid(Fixture.claims(iat: now, exp: now + longest + 1))) }
        #expect(throws: TokenError.lifetimeTooLong) { try verifier.verify(valid(Fixture.claims(iat: now - 60, exp: now + 365 * 86_400))) }
        // exp − iat would overflow Int64: refused, not trapped.
        #expect(throws: TokenError.lifetimeTooLong) { try verifier.verify(valid(Fixture.claims(iat: .min, exp: .max))) }
        // The signer refuses to make one too.
        #expect(throws: ClaimsError.invalidLifetime) {
            try IDTokenClaims(projectID: "demo", uid: "u1", issuedAt: now, lifetime: longest + 1, signInProvider: "password").json()
        }
    }

    @Test func notBefore() throws {
        var claims = Fixture.claims()
        claims["nbf"] = .int(Fixture.now + TokenVerifier.defaultLeeway + 1)
        #expect(throws: TokenError.notYetValid) { try verifier.verify(valid(claims)) }
        claims["nbf"] = .int(Fixture.now)
        _ = try verifier.verify(valid(claims))
    }

    @Test func fractionalNumericDates() throws {
        var claims = Fixture.claims()
        claims["exp"] = .double(Double(Fixture.now) + 10.5)
        _ = try verifier.verify(valid(claims))
        claims["exp"] = .double(1e300)
        #expect(throws: TokenError.invalidClaim("exp")) { try verifier.verify(valid(claims)) }
    }

    @Test func audienceAndIssuer() throws {
        let claims = try IDTokenClaims(projectID: "demo", uid: "u1", issuedAt: Fixture.now, signInProvider: "password").json()
        let token = try TokenSigner(key: Fixture.key()).sign(claims: claims)
        _ = try Fixture.verifier(audience: "demo", issuer: "https://securetoken.google.com/demo").verify(token)
        #expect(throws: TokenError.wrongAudience) { try Fixture.verifier(audience: "other").verify(token) }
        #expect(throws: TokenError.wrongIssuer) { try Fixture.verifier(issuer: "https://securetoken.google.com/other").verify(token) }
    }

    @Test func errorDescriptionsNeverEchoTheToken() {
        let token = Fixture.forge(header: Fixture.header(kid: "SECRET-KID"), payload: ["sub": "SECRET-SUB"])
        do {
            _ = try verifier.verify(token)
            Issue.record("accepted")
        } catch {
            #expect(!error.description.contains("SECRET"))
        }
    }
}
