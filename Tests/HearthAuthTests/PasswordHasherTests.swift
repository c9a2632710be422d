import Testing
@testable import HearthAuth

@Suite("PasswordHasher")
struct PasswordHasherTests {
    /// Cheap parameters so the suite stays fast (~1 ms per hash).
    static let fast = try! ScryptParameters(logN: 10, r: 8, p: 1)
    let hasher = PasswordHasher(parameters: fast)

    @Test func hashesAndVerifies() throws {
        let phc = try hasher.hash("correct horse battery staple")
        #expect(phc.hasPrefix("$scrypt$ln=10,r=8,p=1$"))
        #expect(try hasher.verify("correct horse battery staple", against: phc))
        #expect(try !hasher.verify("correct horse battery stapl", against: phc))
        #expect(try !hasher.verify("", against: phc))
        let parsed = try PHCString(parsing: phc)
        #expect(parsed.salt.count == 16 && parsed.hash.count == 32)
    }

    @Test func saltsAreFreshPerHash() throws {
        let a = try PHCString(parsing: try hasher.hash("same"))
        let b = try PHCString(parsing: try hasher.hash("same"))
        #expect(a.salt != b.salt)
        #expect(a.hash != b.hash)
    }

    @Test func unicodeAndEmptyPasswords() throws {
        for password in ["", "pässwörd", "密码🔑", String(repeating: "x", count: PasswordHasher.maxPasswordBytes)] {
            #expect(try hasher.verify(password, against: try hasher.hash(password)))
        }
        // No normalisation: NFC and NFD spellings are different passwords.
        #expect(try !hasher.verify("e\u{301}", against: try hasher.hash("\u{e9}")))
    }

    @Test func rejectsOverlongPasswords() throws {
        let long = String(repeating: "x", count: PasswordHasher.maxPasswordBytes + 1)
        #expect(throws: PasswordHashError.passwordTooLong) { try hasher.hash(long) }
        let phc = try hasher.hash("ok")
        #expect(throws: PasswordHashError.passwordTooLong) { try hasher.verify(long, against: phc) }
    }

    /// A known answer: the stored hash is raw scrypt over the password and salt.
    @Test func verifiesAgainstAKnownHash() throws {
        let salt = [UInt8](hex: "000102030405060708090a0b0c0d0e0f")
        let expected = try Scrypt.deriveKey(
            password: Array("hunter2".utf8), salt: salt, n: 1024, r: 8, p: 1, length: 32, maxMemory: 1 << 24)
        let phc = PHCString(parameters: Self.fast, salt: salt, hash: expected).string
        #expect(try hasher.verify("hunter2", against: phc))
        // Verification uses the stored parameters, not the hasher's.
        #expect(try PasswordHasher().verify("hunter2", against: phc))
    }

    @Test func verifyThrowsForMalformedAndHostileHashes() {
        #expect(throws: PasswordHashError.malformed(.structure)) { try hasher.verify("x", against: "not a hash") }
        #expect(throws: PasswordHashError.parameterOutOfRange(.memory)) {
            try hasher.verify("x", against: "$scrypt$ln=20,r=8,p=1$AAECAwQFBgcICQoLDA0ODw$\(PHCStringTests.hashB64)")
        }
    }

    @Test func needsRehash() throws {
        let current = PasswordHasher(parameters: try ScryptParameters(logN: 11, r: 8, p: 1))
        #expect(current.needsRehash(try hasher.hash("pw")))                 // lower N
        #expect(!current.needsRehash(try current.hash("pw")))               // equal
        #expect(!hasher.needsRehash(try current.hash("pw")))                // higher N is fine
        let lowerR = PasswordHasher(parameters: try ScryptParameters(logN: 11, r: 4, p: 1))
        #expect(current.needsRehash(try lowerR.hash("pw")))
        let shortSalt = PasswordHasher(parameters: try ScryptParameters(logN: 11, r: 8, p: 1, saltLength: 8))
        #expect(current.needsRehash(try shortSalt.hash("pw")))
        #expect(current.needsRehash("garbage"))
    }

    /// One round trip at the production default (N = 2^15: ~87 ms and 32 MiB per hash).
    @Test func defaultParameters() throws {
        let hasher = PasswordHasher()
        #expect(hasher.parameters == .default)
        let phc = try hasher.hash("default-cost password")
        #expect(phc.hasPrefix("$scrypt$ln=15,r=8,p=1$"))
        #expect(try hasher.verify("default-cost password", against: phc))
        #expect(!hasher.needsRehash(phc))
    }

    @Test func errorsDoNotEchoInput() {
        let errors: [PasswordHashError] = [
            .malformed(.structure), .parameterOutOfRange(.memory), .passwordTooLong, .unsupportedAlgorithm("?"),
        ]
        for error in errors { #expect(!error.description.contains("hunter2")) }
    }
}
