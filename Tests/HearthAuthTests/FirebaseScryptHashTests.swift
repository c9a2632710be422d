import Testing
@testable import HearthAuth

/// `FirebaseScryptHash`: the stored form of an imported Firebase password hash, and
/// `PasswordHasher.verifyStored`, which sign-in uses.
@Suite("FirebaseScryptHash")
struct FirebaseScryptHashTests {
    typealias Vector = FirebaseScryptTests

    static func imported() throws -> FirebaseScryptHash {
        try FirebaseScryptHash(scrypt: try Vector.scrypt(), base64Salt: Vector.salt, base64Hash: Vector.expected)
    }

    @Test func theStoredStringRoundTripsAndVerifiesThePublicVector() throws {
        let stored = try Self.imported().string
        #expect(stored.hasPrefix("$firebase-scrypt$r=8,m=14$"))
        let parsed = try FirebaseScryptHash(parsing: stored)
        #expect(parsed.string == stored)
        #expect(parsed.verify(Vector.password))
        #expect(!parsed.verify("user1passwore"))
        let hasher = PasswordHasher()
        #expect(try hasher.verifyStored(Vector.password, against: stored))
        #expect(try !hasher.verifyStored("wrong", against: stored))
        #expect(hasher.needsRehash(stored))
    }

    @Test func verifyStoredStillChecksHearthHashes() throws {
        let hasher = try PasswordHasher(parameters: ScryptParameters(logN: 4, r: 1, p: 1))
        let phc = try hasher.hash("hunter22")
        #expect(try hasher.verifyStored("hunter22", against: phc))
        #expect(try !hasher.verifyStored("hunter23", against: phc))
        #expect(!hasher.needsRehash(phc))
    }

    @Test func emptySaltAndSeparatorAreAllowed() throws {
        let scrypt = try FirebaseScrypt(signerKey: [1, 2, 3], saltSeparator: [], rounds: 1, memCost: 1)
        let hash = try scrypt.hash(password: "pw", salt: [])
        let stored = try FirebaseScryptHash(scrypt: scrypt, salt: [], hash: hash).string
        #expect(stored.contains("$$$"))
        #expect(try PasswordHasher().verifyStored("pw", against: stored))
    }

    @Test(arguments: [
        "$firebase-scrypt$",
        "$firebase-scrypt$r=8,m=14$a2V5$$$",                      // no hash
        "$firebase-scrypt$r=8,m=14$$Bw$c2FsdA$aGFzaA",            // no key
        "$firebase-scrypt$r=8$a2V5$Bw$c2FsdA$aGFzaA",             // one parameter
        "$firebase-scrypt$m=14,r=8$a2V5$Bw$c2FsdA$aGFzaA",        // wrong order
        "$firebase-scrypt$r=08,m=14$a2V5$Bw$c2FsdA$aGFzaA",       // not canonical
        "$firebase-scrypt$r=9,m=14$a2V5$Bw$c2FsdA$aGFzaA",        // rounds out of range
        "$firebase-scrypt$r=8,m=15$a2V5$Bw$c2FsdA$aGFzaA",        // memCost out of range
        "$firebase-scrypt$r=8,m=14$a2V5$Bw==$c2FsdA$aGFzaA",      // padded
        "$firebase-scrypt$r=8,m=14$a2V5$Bw$c2F*dA$aGFzaA",        // not base64
        "$firebase-scrypt$r=8,m=14$a2V5$Bw$c2FsdA$aGFzaA$extra",  // extra field
        "firebase-scrypt$r=8,m=14$a2V5$Bw$c2FsdA$aGFzaA",         // no leading $
    ])
    func malformedStringsAreRefusedBeforeAnyHashing(_ text: String) {
        #expect(throws: PasswordHashError.self) { try FirebaseScryptHash(parsing: text) }
        #expect(throws: PasswordHashError.self) { try PasswordHasher().verifyStored("x", against: text) }
    }

    /// The longest string parsed is `maxLength`; a longer one is refused unread.
    @Test func lengthLimit() throws {
        let long = "$firebase-scrypt$r=8,m=14$" + String(repeating: "A", count: FirebaseScryptHash.maxLength)
        #expect(throws: PasswordHashError.malformed(.tooLong)) { try FirebaseScryptHash(parsing: long) }
        // The largest signer key and hash fit.
        let key = [UInt8](repeating: 9, count: FirebaseScrypt.signerKeyLengthRange.upperBound)
        let scrypt = try FirebaseScrypt(signerKey: key, saltSeparator: [UInt8](repeating: 1, count: FirebaseScrypt.maxSaltSeparatorBytes), rounds: 1, memCost: 1)
        let biggest = try FirebaseScryptHash(scrypt: scrypt, salt: [UInt8](repeating: 2, count: FirebaseScrypt.maxSaltBytes), hash: key)
        #expect(biggest.string.utf8.count <= FirebaseScryptHash.maxLength)
        #expect(try FirebaseScryptHash(parsing: biggest.string).string == biggest.string)
        // Salts and hashes out of range.
        #expect(throws: PasswordHashError.malformed(.saltEncoding)) {
            try FirebaseScryptHash(scrypt: scrypt, salt: [UInt8](repeating: 2, count: FirebaseScrypt.maxSaltBytes + 1), hash: key)
        }
        #expect(throws: PasswordHashError.malformed(.hashEncoding)) { try FirebaseScryptHash(scrypt: scrypt, salt: [], hash: []) }
        #expect(throws: PasswordHashError.malformed(.hashEncoding)) {
            try FirebaseScryptHash(scrypt: scrypt, salt: [], hash: key + [1])
        }
    }

    @Test func descriptionHidesTheSecrets() throws {
        let text = "\(try Self.imported())"
        #expect(!text.contains("jxspr8") && !text.contains("42xEC"))
        #expect(text.contains("14"))
    }
}
