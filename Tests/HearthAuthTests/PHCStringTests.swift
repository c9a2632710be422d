import Testing
@testable import HearthAuth

@Suite("PHCString")
struct PHCStringTests {
    static let salt = [UInt8](hex: "000102030405060708090a0b0c0d0e0f")
    static let hash = [UInt8](hex: "f0e1d2c3b4a5968778695a4b3c2d1e0ff0e1d2c3b4a5968778695a4b3c2d1e0f")
    static let saltB64 = "AAECAwQFBgcICQoLDA0ODw"
    static let hashB64 = "8OHSw7Sllod4aVpLPC0eD/Dh0sO0pZaHeGlaSzwtHg8"
    static let valid = "$scrypt$ln=15,r=8,p=1$\(saltB64)$\(hashB64)"

    @Test func formatsTheDocumentedForm() {
        let phc = PHCString(parameters: .default, salt: Self.salt, hash: Self.hash)
        #expect(phc.string == Self.valid)
    }

    @Test func parsesAndRoundTrips() throws {
        let phc = try PHCString(parsing: Self.valid)
        #expect(phc.parameters == .default)
        #expect(phc.salt == Self.salt)
        #expect(phc.hash == Self.hash)
        #expect(phc.string == Self.valid)
    }

    @Test func descriptionHidesSaltAndHash() throws {
        let text = "\(try PHCString(parsing: Self.valid))"
        #expect(!text.contains(Self.saltB64) && !text.contains(Self.hashB64))
        #expect(text.contains("ln=15"))
    }

    @Test(arguments: [
        ("", PasswordHashError.malformed(.structure)),
        ("scrypt$ln=15,r=8,p=1$\(saltB64)$\(hashB64)", .malformed(.structure)),
        ("$scrypt$ln=15,r=8,p=1$\(saltB64)", .malformed(.structure)),
        ("$scrypt$ln=15,r=8,p=1$\(saltB64)$\(hashB64)$", .malformed(.structure)),
        ("$scrypt$ln=15,r=8,p=1$$\(hashB64)", .malformed(.structure)),
        ("$scrypt$v=1$ln=15,r=8,p=1$\(saltB64)$\(hashB64)", .malformed(.structure)),
        ("$scrypt$$\(saltB64)$\(hashB64)", .malformed(.structure)),
        ("$scrypt$r=8,ln=15,p=1$\(saltB64)$\(hashB64)", .malformed(.parameters)),
        ("$scrypt$ln=15,r=8$\(saltB64)$\(hashB64)", .malformed(.parameters)),
        ("$scrypt$ln=15,r=8,p=1,x=2$\(saltB64)$\(hashB64)", .malformed(.parameters)),
        ("$scrypt$ln=015,r=8,p=1$\(saltB64)$\(hashB64)", .malformed(.parameters)),
        ("$scrypt$ln=+15,r=8,p=1$\(saltB64)$\(hashB64)", .malformed(.parameters)),
        ("$scrypt$ln=-1,r=8,p=1$\(saltB64)$\(hashB64)", .malformed(.parameters)),
        ("$scrypt$ln=,r=8,p=1$\(saltB64)$\(hashB64)", .malformed(.parameters)),
        ("$scrypt$ln=15,r=8,p=1 $\(saltB64)$\(hashB64)", .malformed(.parameters)),
        ("$scrypt$ln=9999999999,r=8,p=1$\(saltB64)$\(hashB64)", .malformed(.parameters)),
        ("$scrypt$ln=15,r=8,p=1$\(saltB64)==$\(hashB64)", .malformed(.saltEncoding)),
        ("$scrypt$ln=15,r=8,p=1$AAECAwQFBgcICQoLDA0OD_$\(hashB64)", .malformed(.saltEncoding)),
        ("$scrypt$ln=15,r=8,p=1$\(saltB64)$\(hashB64)=", .malformed(.hashEncoding)),
        ("$scrypt$ln=15,r=8,p=1$\(saltB64)$8OHSw7Sllod4aVpLPC0eD_Dh0sO0pZaHeGlaSzwtHg8", .malformed(.hashEncoding)),
        ("$argon2id$v=19$m=65536,t=3,p=4$c2FsdA$aGFzaA", .unsupportedAlgorithm("argon2id")),
        ("$SCRYPT$ln=15,r=8,p=1$\(saltB64)$\(hashB64)", .unsupportedAlgorithm("?")),
        ("$" + String(repeating: "a", count: 300), .malformed(.tooLong)),
    ])
    func rejectsMalformed(text: String, expected: PasswordHashError) {
        #expect(throws: expected) { try PHCString(parsing: text) }
    }

    /// Hostile stored strings: each named limit is crossed and rejected before any hashing.
    @Test(arguments: [
        ("ln=21,r=1,p=1", PasswordHashError.Parameter.logN),
        ("ln=0,r=8,p=1", .logN),
        ("ln=10,r=33,p=1", .r),
        ("ln=10,r=0,p=1", .r),
        ("ln=10,r=8,p=17", .p),
        ("ln=10,r=8,p=0", .p),
        ("ln=20,r=8,p=1", .memory),   // 1 GiB
        ("ln=19,r=5,p=1", .memory),   // 320 MiB
        ("ln=17,r=8,p=16", .work),    // 128 MiB but 2^24 work
    ])
    func capsParameters(params: String, which: PasswordHashError.Parameter) {
        #expect(throws: PasswordHashError.parameterOutOfRange(which)) {
            try PHCString(parsing: "$scrypt$\(params)$\(Self.saltB64)$\(Self.hashB64)")
        }
    }

    @Test func capsSaltAndHashLengths() {
        let shortSalt = Base64.encode([UInt8](repeating: 1, count: 7), padding: .none)
        #expect(throws: PasswordHashError.parameterOutOfRange(.saltLength)) {
            try PHCString(parsing: "$scrypt$ln=15,r=8,p=1$\(shortSalt)$\(Self.hashB64)")
        }
        let shortHash = Base64.encode([UInt8](repeating: 1, count: 15), padding: .none)
        #expect(throws: PasswordHashError.parameterOutOfRange(.hashLength)) {
            try PHCString(parsing: "$scrypt$ln=15,r=8,p=1$\(Self.saltB64)$\(shortHash)")
        }
        let longHash = Base64.encode([UInt8](repeating: 1, count: 65), padding: .none)
        #expect(throws: PasswordHashError.parameterOutOfRange(.hashLength)) {
            try PHCString(parsing: "$scrypt$ln=15,r=8,p=1$\(Self.saltB64)$\(longHash)")
        }
    }

    @Test func limitsAreAcceptedAtTheEdge() throws {
        // 128·8·(2^18 + 3) bytes is just over 256 MiB; r = 7 fits.
        _ = try ScryptParameters(logN: 18, r: 7, p: 1)
        #expect(throws: PasswordHashError.parameterOutOfRange(.memory)) { try ScryptParameters(logN: 18, r: 8, p: 1) }
        _ = try ScryptParameters(logN: 17, r: 8, p: 4)   // work exactly 2^22
        #expect(throws: PasswordHashError.parameterOutOfRange(.work)) { try ScryptParameters(logN: 17, r: 8, p: 5) }
        #expect(try ScryptParameters(logN: 15, r: 8, p: 1) == .default)
    }
}
