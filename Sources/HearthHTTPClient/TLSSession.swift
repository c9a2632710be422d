import COpenSSL

/// TLS over a connected blocking socket (an `https` request, or the mail sender after
/// `STARTTLS`), by libssl: TLS 1.2 or later, the peer's certificate verified against
/// `caFile` or the system's authorities, and its name against `host` (SNI sent).
///
/// `@unchecked Sendable` is not claimed: one session belongs to the one exchange (an
/// `HTTPClient.send`, an `SMTPClient.send`) that made it.
public final class TLSSession {
    private let context: OpaquePointer
    private let ssl: OpaquePointer

    public struct Failure: Error, CustomStringConvertible {
        public let description: String
        static func capture(_ what: String) -> Failure {
            let code = ERR_get_error()
            ERR_clear_error()
            guard code != 0 else { return Failure(description: what) }
            var text = [CChar](repeating: 0, count: 256)
            ERR_error_string_n(code, &text, text.count)
            return Failure(description: "\(what): \(String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))")
        }
    }

    public init(fd: Int32, host: String, caFile: String?) throws(Failure) {
        guard let context = SSL_CTX_new(TLS_client_method()) else { throw .capture("SSL_CTX_new") }
        guard hearth_ssl_ctx_min_tls12(context) == 1 else {
            SSL_CTX_free(context)
            throw .capture("minimum TLS version")
        }
        SSL_CTX_set_verify(context, SSL_VERIFY_PEER, nil)
        let trusted = caFile.map { SSL_CTX_load_verify_locations(context, $0, nil) } ?? SSL_CTX_set_default_verify_paths(context)
        guard trusted == 1 else {
            SSL_CTX_free(context)
            throw .capture(caFile.map { "cannot read the CA file \($0)" } ?? "no system certificate authorities")
        }
        guard let ssl = SSL_new(context) else {
            SSL_CTX_free(context)
            throw .capture("SSL_new")
        }
        self.context = context
        self.ssl = ssl
        guard SSL_set_fd(ssl, fd) == 1, hearth_ssl_set_sni(ssl, host) == 1, SSL_set1_host(ssl, host) == 1 else {
            throw .capture("TLS setup")
        }
        guard SSL_connect(ssl) == 1 else {
            let verify = SSL_get_verify_result(ssl)
            if verify != X509_V_OK {
                ERR_clear_error()
                throw Failure(description: "the certificate of \(host) is not trusted: \(String(cString: X509_verify_cert_error_string(verify)))")
            }
            throw .capture("TLS handshake with \(host)")
        }
    }

    deinit {
        SSL_shutdown(ssl)
        SSL_free(ssl)
        SSL_CTX_free(context)
        ERR_clear_error()
    }

    public func write(_ bytes: [UInt8]) throws(Failure) {
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeBytes { SSL_write(ssl, $0.baseAddress! + offset, Int32(bytes.count - offset)) }
            guard written > 0 else { throw .capture("SSL_write") }
            offset += Int(written)
        }
    }

    /// Whether libssl holds bytes read from the socket and not handed out yet (a record, or
    /// part of one): an idle connection with any is not fit for a new request, though its
    /// socket shows nothing to read.
    public var hasBufferedInput: Bool { SSL_pending(ssl) > 0 || SSL_has_pending(ssl) == 1 }

    /// Reads into `buffer`; 0 at the end of the stream.
    public func read(into buffer: inout [UInt8]) throws(Failure) -> Int {
        let count = buffer.withUnsafeMutableBytes { SSL_read(ssl, $0.baseAddress, Int32($0.count)) }
        if count > 0 { return Int(count) }
        if SSL_get_error(ssl, count) == SSL_ERROR_ZERO_RETURN { return 0 }
        throw .capture("SSL_read")
    }
}
