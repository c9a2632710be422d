import Dispatch
import HearthJSON
import Synchronization
import Testing
@testable import HearthAuth

@Suite("SigningKey and VerifyingKey")
struct SigningKeyTests {
    /// RFC 8032 §7.1, TEST 1 (empty message).
    @Test func rfc8032Test1() throws {
        let key = try SigningKey(rawPrivateKey: Fixture.rfcSecretKey)
        #expect(key.verifyingKey.rawRepresentation.hex == "d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a")
        let signature = try key.sign([])
        #expect(signature.hex == "e5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e065224901555fb8821590a33bacc61e39701cf9b46bd25bf5f0595bbe24655141438e7a100b")
        #expect(key.verifyingKey.isValidSignature(signature, for: []))
        #expect(!key.verifyingKey.isValidSignature(signature, for: [0]))
    }

    /// RFC 8032 §7.1, TEST 2 (one-byte message 0x72).
    @Test func rfc8032Test2() throws {
        let key = try SigningKey(rawPrivateKey: Fixture.otherSecretKey)
        #expect(key.verifyingKey.rawRepresentation.hex == "3d4017c3e843895a92b70aa74d1b7ebc9c982ccf2ec4968cc0cd55f12af4660c")
        let signature = try key.sign([0x72])
        #expect(signature.hex == "92a009a9f0d4cab8720e820b5f642540a2b27b5416503f8fb3762223ebdb69da085ac1e43e15996e458f3613d0f11d8c387b2eaeb4302aeeb00d291612bb0c00")
        let publicOnly = try VerifyingKey(rawRepresentation: key.verifyingKey.rawRepresentation)
        #expect(publicOnly.isValidSignature(signature, for: [0x72]))
    }

    @Test func rejectsTamperedSignatures() throws {
        let key = Fixture.key()
        let message = Array("hello".utf8)
        let signature = try key.sign(message)
        for index in [0, 31, 32, 63] {
            var bad = signature
            bad[index] ^= 0x01
            #expect(!key.verifyingKey.isValidSignature(bad, for: message))
        }
        #expect(!key.verifyingKey.isValidSignature(Array(signature.dropLast()), for: message))
        #expect(!key.verifyingKey.isValidSignature([], for: message))
        #expect(!Fixture.otherKey().verifyingKey.isValidSignature(signature, for: message))
    }

    /// S + L (the group order) is the same scalar but a non-canonical encoding; RFC 8032
    /// §5.1.7 requires rejecting it, which makes signatures non-malleable.
    @Test func rejectsNonCanonicalS() throws {
        let key = Fixture.key()
        let signature = try key.sign([1, 2, 3])
        let order = [UInt8](hex: "edd3f55c1a631258d69cf7a2def9de1400000000000000000000000000000010")
        var malleated = Array(signature[0..<32])
        var carry = 0
        for i in 0..<32 {
            let sum = Int(signature[32 + i]) + Int(order[i]) + carry
            malleated.append(UInt8(sum & 0xff))
            carry = sum >> 8
        }
        #expect(carry == 0)
        #expect(malleated != signature)
        #expect(!key.verifyingKey.isValidSignature(malleated, for: [1, 2, 3]))
    }

    /// One key shared by many threads (the server signs from several queues).
    @Test func concurrentUse() {
        let key = Fixture.key()
        let failures = Mutex(0)
        DispatchQueue.concurrentPerform(iterations: 200) { i in
            let message = Array("message \(i)".utf8)
            let ok = (try? key.sign(message)).map { key.verifyingKey.isValidSignature($0, for: message) } ?? false
            if !ok { failures.withLock { $0 += 1 } }
        }
        #expect(failures.withLock { $0 } == 0)
    }

    @Test func generateExportImport() throws {
        let key = try SigningKey.generate()
        let raw = try key.rawPrivateKey()
        #expect(raw.count == 32)
        let again = try SigningKey(rawPrivateKey: raw)
        #expect(again.verifyingKey == key.verifyingKey)
        #expect(again.kid == key.kid)
        let other = try SigningKey.generate()
        #expect(other.kid != key.kid)
        let message = Array("m".utf8)
        #expect(again.verifyingKey.isValidSignature(try key.sign(message), for: message))
    }

    @Test func kidIsBase64urlOfTheFirst8BytesOfSHA256() {
        let key = Fixture.key()
        let expected = Base64.encode(SHA256.hash(key.verifyingKey.rawRepresentation).prefix(8), alphabet: .url, padding: .none)
        #expect(key.kid == expected)
        #expect(key.kid.count == 11)
        #expect(Fixture.key().kid == key.kid)
    }

    @Test func rejectsBadRawKeys() {
        #expect(throws: KeyError.invalidPrivateKeyLength(31)) { try SigningKey(rawPrivateKey: [UInt8](repeating: 1, count: 31)) }
        #expect(throws: KeyError.invalidPrivateKeyLength(64)) { try SigningKey(rawPrivateKey: [UInt8](repeating: 1, count: 64)) }
        #expect(throws: KeyError.invalidPublicKey) { try VerifyingKey(rawRepresentation: [UInt8](repeating: 1, count: 33)) }
    }

    @Test func privateKeyStaysOutOfDescriptions() throws {
        let key = Fixture.key()
        var dumped = ""
        dump(key, to: &dumped)
        let secretHex = Fixture.rfcSecretKey.hex
        let secretB64 = Base64.encode(Fixture.rfcSecretKey, alphabet: .url, padding: .none)
        for text in ["\(key)", String(reflecting: key), dumped] {
            #expect(text.contains(key.kid))
            #expect(!text.contains(secretHex) && !text.contains(secretB64))
        }
    }

    @Test func jwkRoundTrip() throws {
        let key = Fixture.key().verifyingKey
        #expect(key.jwk == [
            "kty": "OKP", "crv": "Ed25519", "x": "11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo",
            "kid": .string(key.kid), "alg": "EdDSA", "use": "sig",
        ])
        #expect(try VerifyingKey(jwk: key.jwk) == key)
        // kid, alg and use are optional but must agree when present.
        #expect(try VerifyingKey(jwk: ["kty": "OKP", "crv": "Ed25519", "x": "11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo"]) == key)
    }

    @Test(arguments: [
        ["kty": "RSA", "crv": "Ed25519", "x": "11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo"] as JSONValue,
        ["kty": "OKP", "crv": "X25519", "x": "11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo"],
        ["kty": "OKP", "crv": "Ed25519", "x": "11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo="],
        ["kty": "OKP", "crv": "Ed25519"],
        ["kty": "OKP", "crv": "Ed25519", "x": "11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo", "kid": "other"],
        ["kty": "OKP", "crv": "Ed25519", "x": "11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo", "alg": "RS256"],
        ["kty": "OKP", "crv": "Ed25519", "x": "11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo", "use": "enc"],
        "not an object",
    ])
    func rejectsBadJWKs(jwk: JSONValue) {
        #expect(throws: KeyError.self) { try VerifyingKey(jwk: jwk) }
    }

    @Test func jwksDocument() throws {
        let keys = [Fixture.key().verifyingKey, Fixture.otherKey().verifyingKey]
        let document = JWKS.document(keys)
        guard case .array(let entries)? = document.objectValue?["keys"] else {
            Issue.record("no keys array")
            return
        }
        #expect(entries == keys.map(\.jwk))
        let parsed = try JWKS.keys(from: document)
        #expect(parsed == [keys[0].kid: keys[0], keys[1].kid: keys[1]])
        #expect(throws: KeyError.invalidJWK) { try JWKS.keys(from: ["keys": "nope"]) }
        #expect(throws: KeyError.invalidJWK) { try JWKS.keys(from: ["keys": [keys[0].jwk, ["kty": "RSA"]]]) }
    }
}
