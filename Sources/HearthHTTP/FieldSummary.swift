/// What the parser must know from the header fields to frame and route a request,
/// gathered over raw bytes while the fields are read (no lookups in `HTTPHeaders` later).
struct FieldSummary {
    let minorVersion: Int
    var hostCount = 0
    var contentLength: Int?
    var sawTransferEncoding = false
    var chunkedCount = 0
    var otherCoding = false
    var lastCodingIsChunked = false
    var connectionClose = false
    var connectionKeepAlive = false
    var expectContinue = false

    init(minorVersion: Int) {
        self.minorVersion = minorVersion
    }

    /// Whether the connection stays open after this request (RFC 9112 §9.3): HTTP/1.1
    /// unless `close`; HTTP/1.0 only with `keep-alive`.
    var keepAlive: Bool {
        if connectionClose { return false }
        return minorVersion >= 1 || connectionKeepAlive
    }

    mutating func inspect(name: UnsafeBufferPointer<UInt8>, value: UnsafeBufferPointer<UInt8>) throws(HTTPParseError) {
        switch name.count {
        case 4 where ASCII.equalsLowercase(name, "host"):
            hostCount += 1
        case 6 where ASCII.equalsLowercase(name, "expect"):
            // RFC 9110 §10.1.1: an HTTP/1.0 client cannot wait for 100; ignore it there.
            guard minorVersion >= 1 else { return }
            guard ASCII.equalsLowercase(value, "100-continue") else { throw .unsupportedExpectation }
            expectContinue = true
        case 10 where ASCII.equalsLowercase(name, "connection"):
            ASCII.forEachListElement(value) { option in
                if ASCII.equalsLowercase(option, "close") { connectionClose = true }
                if ASCII.equalsLowercase(option, "keep-alive") { connectionKeepAlive = true }
                return true
            }
        case 14 where ASCII.equalsLowercase(name, "content-length"):
            try inspectContentLength(value)
        case 17 where ASCII.equalsLowercase(name, "transfer-encoding"):
            sawTransferEncoding = true
            ASCII.forEachListElement(value) { coding in
                var end = 0
                while end < coding.count && coding[end] != ASCII.semicolon { end += 1 }
                let name = ASCII.trimmingWhitespace(UnsafeBufferPointer(rebasing: coding[0..<end]))
                if ASCII.equalsLowercase(name, "chunked") {
                    chunkedCount += 1
                    lastCodingIsChunked = true
                } else {
                    otherCoding = true
                    lastCodingIsChunked = false
                }
                return true
            }
        default:
            break
        }
    }

    /// `Content-Length = 1*DIGIT`; a list of identical values is accepted (RFC 9112 §6.3
    /// item 5). Huge values saturate and are refused later as 413, not 400.
    private mutating func inspectContentLength(_ value: UnsafeBufferPointer<UInt8>) throws(HTTPParseError) {
        var failure: HTTPParseError?
        var sawValue = false
        ASCII.forEachListElement(value) { element in
            var length = 0
            for byte in element {
                guard ASCII.isDigit(byte) else {
                    failure = .invalidContentLength
                    return false
                }
                length = length > (Int.max - 9) / 10 ? Int.max : length * 10 + Int(byte - UInt8(ascii: "0"))
            }
            if let previous = contentLength, previous != length {
                failure = .conflictingContentLength
                return false
            }
            contentLength = length
            sawValue = true
            return true
        }
        if let failure { throw failure }
        if !sawValue { throw .invalidContentLength }
    }

    /// The body framing, after every field was seen (RFC 9112 §6.1, §6.3, §3.2).
    func framing(maxBodyBytes: Int) throws(HTTPParseError) -> BodyFraming {
        if hostCount > 1 || (minorVersion >= 1 && hostCount == 0) { throw .invalidHost }
        if sawTransferEncoding {
            if minorVersion == 0 { throw .invalidTransferEncoding }
            if contentLength != nil { throw .contentLengthWithTransferEncoding }
            if !lastCodingIsChunked { throw .invalidTransferEncoding }
            if otherCoding { throw .unsupportedTransferCoding }
            if chunkedCount != 1 { throw .invalidTransferEncoding }
            return .chunked
        }
        guard let contentLength, contentLength > 0 else { return .none }
        if contentLength > maxBodyBytes { throw .bodyTooLarge }
        return .length(contentLength)
    }
}
