import COpenSSL

/// A libcrypto call that failed.
///
/// Carries the C function's name and the first code on libcrypto's (thread-local) error
/// queue, which is drained when the error is made so a later failure never reports a stale
/// code. Neither the description nor any field holds key material, passwords or salts: only
/// the function name and libcrypto's own reason text.
public struct CryptoError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The libcrypto function that failed, e.g. `"EVP_PBE_scrypt"`.
    public let function: String
    /// The packed libcrypto error code (`ERR_get_error()`), 0 when the queue was empty.
    public let code: UInt

    public init(function: String, code: UInt) {
        self.function = function
        self.code = code
    }

    /// Records a failure of `function`, taking the oldest queued error code and clearing the
    /// queue.
    static func capture(_ function: String) -> CryptoError {
        let code = ERR_get_error()
        ERR_clear_error()
        return CryptoError(function: function, code: code)
    }

    public var description: String {
        guard code != 0 else { return "libcrypto \(function) failed" }
        var buffer = [CChar](repeating: 0, count: 256)
        ERR_error_string_n(code, &buffer, buffer.count)
        let reason = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return "libcrypto \(function) failed: \(reason)"
    }
}
