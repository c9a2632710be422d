import COpenSSL

/// AES-256 in counter mode through libcrypto's EVP cipher API.
///
/// Only Firebase's modified scrypt needs it (docs/protocol/auth.md §5.2): the 16-byte
/// counter block starts at all zeros and libcrypto increments it as a 128-bit big-endian
/// number, which for any input shorter than 2^64 blocks equals "64-bit nonce 0 || 64-bit BE
/// counter from 0".
enum AESCTR {
    static let keyByteCount = 32
    static let blockByteCount = 16

    /// `plaintext` encrypted under `key` with counter block `iv` (CTR: same as decryption).
    static func encrypt(_ plaintext: [UInt8], key: ArraySlice<UInt8>, iv: [UInt8]) throws(CryptoError) -> [UInt8] {
        precondition(key.count == keyByteCount && iv.count == blockByteCount, "AES-256-CTR key/IV size")
        guard let context = EVP_CIPHER_CTX_new() else { throw CryptoError.capture("EVP_CIPHER_CTX_new") }
        defer { EVP_CIPHER_CTX_free(context) }
        let key = Array(key)
        let initialised = key.withUnsafeBufferPointer { k in
            iv.withUnsafeBufferPointer { v in
                EVP_EncryptInit_ex(context, EVP_aes_256_ctr(), nil, k.baseAddress, v.baseAddress)
            }
        }
        guard initialised == 1 else { throw CryptoError.capture("EVP_EncryptInit_ex") }

        // CTR is a stream mode: the output is exactly as long as the input, and Final
        // writes nothing; one spare block keeps libcrypto's bounds contract regardless.
        var output = [UInt8](repeating: 0, count: plaintext.count + blockByteCount)
        var written: Int32 = 0
        var finalWritten: Int32 = 0
        let updated = plaintext.withUnsafeBufferPointer { input in
            output.withUnsafeMutableBufferPointer { out in
                EVP_EncryptUpdate(context, out.baseAddress, &written, input.baseAddress, Int32(input.count))
            }
        }
        guard updated == 1 else { throw CryptoError.capture("EVP_EncryptUpdate") }
        let finished = output.withUnsafeMutableBufferPointer { out in
            EVP_EncryptFinal_ex(context, out.baseAddress! + Int(written), &finalWritten)
        }
        guard finished == 1 else { throw CryptoError.capture("EVP_EncryptFinal_ex") }
        return Array(output.prefix(Int(written + finalWritten)))
    }
}
