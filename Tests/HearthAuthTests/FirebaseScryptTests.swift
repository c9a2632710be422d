import Testing
@testable import HearthAuth

@Suite("FirebaseScrypt")
struct FirebaseScryptTests {
    /// The public vector from firebase/scrypt's README (docs/protocol/auth.md §5.2).
    static let signerKey = "jxspr8Ki0RYycVU8zykbdLGjFQ3McFUH0uiiTvC8pVMXAn210wjLNmdZJzxUECKbm0QsEmYUSDzZvpjeJ9WmXA=="
    static let saltSeparator = "Bw=="
    static let salt = "42xEC+ixf3L2lw=="
    static let password = "user1password"
    static let expected = "lSrfV15cpx95/sZS2W9c9Kp6i/LVgQNDNC/qzrCnh1SAyZvqmZqAjTdn3aoItz+VHjoZilo78198JAdRuid5lQ=="

    static func scrypt() throws -> FirebaseScrypt {
        try FirebaseScrypt(base64SignerKey: signerKey, base64SaltSeparator: saltSeparator, rounds: 8, memCost: 14)
    }

    @Test func publicVector() throws {
        let firebase = try Self.scrypt()
        let salt = try #require(Base64.decode(Self.salt))
        let hash = try firebase.hash(password: Self.password, salt: salt)
        #expect(Base64.encode(hash) == Self.expected)
        #expect(firebase.verify(password: Self.password, base64Salt: Self.salt, base64Hash: Self.expected))
    }

    @Test func wrongInputsDoNotVerify() throws {
        let firebase = try Self.scrypt()
        #expect(!firebase.verify(password: "user1passwore", base64Salt: Self.salt, base64Hash: Self.expected))
        #expect(!firebase.verify(password: Self.password, base64Salt: "42xEC+ixf3L2lA==", base64Hash: Self.expected))
        #expect(!firebase.verify(password: Self.password, base64Salt: "not base64!", base64Hash: Self.expected))
        let truncated = String(Self.expected.dropLast(4))
        #expect(!firebase.verify(password: Self.password, base64Salt: Self.salt, base64Hash: truncated))
        let otherSeparator = try FirebaseScrypt(
            base64SignerKey: Self.signerKey, base64SaltSeparator: "CA==", rounds: 8, memCost: 14)
        #expect(!otherSeparator.verify(password: Self.password, base64Salt: Self.salt, base64Hash: Self.expected))
    }

    @Test(arguments: [(0, 14), (9, 14), (8, 0), (8, 15), (-1, 14)])
    func boundsChecksParameters(rounds: Int, memCost: Int) {
        #expect(throws: FirebaseScryptError.self) {
            try FirebaseScrypt(base64SignerKey: Self.signerKey, base64SaltSeparator: Self.saltSeparator, rounds: rounds, memCost: memCost)
        }
    }

    @Test func acceptsTheRangeEdges() throws {
        _ = try FirebaseScrypt(signerKey: [1], saltSeparator: [], rounds: 1, memCost: 1)
        _ = try FirebaseScrypt(signerKey: [1], saltSeparator: [], rounds: 8, memCost: 14)
        #expect(throws: FirebaseScryptError.roundsOutOfRange) {
            try FirebaseScrypt(signerKey: [1], saltSeparator: [], rounds: 9, memCost: 14)
        }
        #expect(throws: FirebaseScryptError.memCostOutOfRange) {
            try FirebaseScrypt(signerKey: [1], saltSeparator: [], rounds: 8, memCost: 15)
        }
    }

    @Test func rejectsBadKeysAndInputs() throws {
        #expect(throws: FirebaseScryptError.invalidSignerKey) {
            try FirebaseScrypt(signerKey: [], saltSeparator: [], rounds: 8, memCost: 14)
        }
        #expect(throws: FirebaseScryptError.invalidSignerKey) {
            try FirebaseScrypt(base64SignerKey: "%%%", base64SaltSeparator: "Bw==", rounds: 8, memCost: 14)
        }
        #expect(throws: FirebaseScryptError.invalidSaltSeparator) {
            try FirebaseScrypt(base64SignerKey: Self.signerKey, base64SaltSeparator: "B", rounds: 8, memCost: 14)
        }
        let cheap = try FirebaseScrypt(signerKey: [1, 2, 3], saltSeparator: [7], rounds: 1, memCost: 1)
        #expect(throws: FirebaseScryptError.invalidSalt) {
            try cheap.hash(password: "x", salt: [UInt8](repeating: 0, count: FirebaseScrypt.maxSaltBytes + 1))
        }
        #expect(throws: FirebaseScryptError.passwordTooLong) {
            try cheap.hash(password: String(repeating: "x", count: PasswordHasher.maxPasswordBytes + 1), salt: [])
        }
        // The output is as long as the signer key.
        #expect(try cheap.hash(password: "x", salt: [1]).count == 3)
    }

    @Test func descriptionHidesTheSignerKey() throws {
        let firebase = try Self.scrypt()
        var dumped = ""
        dump(firebase, to: &dumped)
        for text in ["\(firebase)", String(reflecting: firebase), dumped] {
            #expect(!text.contains("jxspr8") && !text.contains("143"))   // 143 = 0x8f, the key's first byte
            #expect(text.contains("14"))
        }
    }
}
