import Testing
@testable import HearthAuth

/// Known-answer tests for the libcrypto wrappers.
@Suite("Primitives")
struct PrimitiveTests {
    /// RFC 7914 §12 (the 1 GiB fourth vector is left out).
    @Test(arguments: [
        ("", "", UInt64(16), UInt64(1), UInt64(1),
         "77d6576238657b203b19ca42c18a0497f16b4844e3074ae8dfdffa3fede21442fcd0069ded0948f8326a753a0fc81f17e8d3e0fb2e0d3628cf35e20c38d18906"),
        ("password", "NaCl", 1024, 8, 16,
         "fdbabe1c9d3472007856e7190d01e9fe7c6ad7cbc8237830e77376634b3731622eaf30d92e22a3886ff109279d9830dac727afb94a83ee6d8360cbdfa2cc0640"),
        ("pleaseletmein", "SodiumChloride", 16384, 8, 1,
         "7023bdcb3afd7348461c06cd81fd38ebfda8fbba904f8e3ea9b543f6545da1f2d5432955613f0fcf62d49705242a9af9e61e85dc0d651e40dfcf017b45575887"),
    ])
    func scryptRFC7914(password: String, salt: String, n: UInt64, r: UInt64, p: UInt64, expected: String) throws {
        let key = try Scrypt.deriveKey(
            password: Array(password.utf8), salt: Array(salt.utf8), n: n, r: r, p: p, length: 64,
            maxMemory: ScryptParameters.maxMemoryBytes)
        #expect(key.hex == expected)
    }

    @Test func scryptFailsWhenMemoryCapIsTooLow() throws {
        let needed = try #require(Scrypt.memoryRequired(n: 1024, r: 8, p: 1))
        #expect(needed == 128 * 8 * (1024 + 2 + 1))
        #expect(throws: CryptoError.self) {
            try Scrypt.deriveKey(password: [1], salt: [2], n: 1024, r: 8, p: 1, length: 32, maxMemory: needed - 1)
        }
        // Exactly the computed figure is enough: the formula matches libcrypto's check.
        _ = try Scrypt.deriveKey(password: [1], salt: [2], n: 1024, r: 8, p: 1, length: 32, maxMemory: needed)
    }

    @Test func memoryRequiredDetectsOverflow() {
        #expect(Scrypt.memoryRequired(n: .max, r: 8, p: 1) == nil)
        #expect(Scrypt.memoryRequired(n: 1 << 62, r: 8, p: 1) == nil)
    }

    /// FIPS 180-2 examples.
    @Test func sha256() {
        #expect(SHA256.hash([UInt8]()).hex == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        #expect(SHA256.hash(Array("abc".utf8)).hex == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
    }

    /// NIST SP 800-38A F.5.5 (CTR-AES256.Encrypt), first two blocks.
    @Test func aes256CTR() throws {
        let key = [UInt8](hex: "603deb1015ca71be2b73aef0857d77811f352c073b6108d72d9810a30914dff4")
        let iv = [UInt8](hex: "f0f1f2f3f4f5f6f7f8f9fafbfcfdfeff")
        let plaintext = [UInt8](hex: "6bc1bee22e409f96e93d7e117393172aae2d8a571e03ac9c9eb76fac45af8e51")
        let ciphertext = try AESCTR.encrypt(plaintext, key: key[...], iv: iv)
        #expect(ciphertext.hex == "601ec313775789a5b7a7f504bbf3d228f443e3ca4d62b59aca84e990cacaf5c5")
        // Odd lengths: CTR is a stream, output length = input length.
        #expect(try AESCTR.encrypt(Array(plaintext.prefix(5)), key: key[...], iv: iv) == Array(ciphertext.prefix(5)))
    }

    @Test func secureRandomBytes() throws {
        #expect(try SecureRandom.bytes(count: 0).isEmpty)
        let a = try SecureRandom.bytes(count: 32)
        let b = try SecureRandom.bytes(count: 32)
        #expect(a.count == 32 && a != b)
    }

    @Test func cryptoErrorNamesTheFunction() {
        let error = CryptoError(function: "EVP_PBE_scrypt", code: 0)
        #expect(error.description == "libcrypto EVP_PBE_scrypt failed")
    }
}
