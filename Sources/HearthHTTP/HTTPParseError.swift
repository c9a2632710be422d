/// Why a request was refused by the parser. A closed set: each case knows its status; the
/// response body carries only a generic text for that status, never these details
/// (docs/design.md §8: parser internals never reach a response).
public enum HTTPParseError: Error, Sendable, Equatable, CaseIterable {
    /// Request line is not `method SP target SP version` (RFC 9112 §3).
    case invalidRequestLine
    /// Method is empty or not a token (RFC 9110 §9.1).
    case invalidMethod
    /// Request target empty or containing characters outside VCHAR (RFC 9112 §3.2).
    case invalidTarget
    /// Version is not `HTTP/DIGIT.DIGIT` (RFC 9112 §2.3).
    case invalidVersion
    /// A well-formed version other than HTTP/1.x → 505.
    case unsupportedVersion
    /// Request line longer than `maxRequestLineBytes` → 414.
    case requestLineTooLong
    /// A CR not followed by LF, or an LF without CR (RFC 9112 §2.2; see the parser's doc).
    case invalidLineEnding
    /// Field name empty or not a token, or whitespace before the colon (RFC 9112 §5.1).
    case invalidHeaderName
    /// A field line without a colon.
    case missingColon
    /// Field value with NUL or another control character (RFC 9110 §5.5).
    case invalidHeaderValue
    /// A field line starting with whitespace: obsolete line folding (RFC 9112 §5.2).
    case obsoleteLineFolding
    /// Header section larger than `maxHeaderBytes` → 431.
    case headersTooLarge
    /// More than `maxHeaderCount` fields → 431.
    case tooManyHeaders
    /// HTTP/1.1 request without Host, or with more than one (RFC 9112 §3.2).
    case invalidHost
    /// Content-Length not a plain decimal number (RFC 9112 §6.3 item 5).
    case invalidContentLength
    /// Several Content-Length values that differ (RFC 9112 §6.3 item 5).
    case conflictingContentLength
    /// Both Content-Length and Transfer-Encoding: refused to rule out smuggling
    /// (RFC 9112 §6.3 item 3 allows treating it as an error).
    case contentLengthWithTransferEncoding
    /// A transfer coding other than `chunked` → 501 (RFC 9112 §6.1).
    case unsupportedTransferCoding
    /// Transfer-Encoding whose final coding is not chunked, or sent in HTTP/1.0
    /// (RFC 9112 §6.1, §6.3 item 4).
    case invalidTransferEncoding
    /// Body larger than `maxBodyBytes` → 413.
    case bodyTooLarge
    /// Chunk size line that is not hex digits (plus ignored extensions) (RFC 9112 §7.1).
    case invalidChunkSize
    /// Chunk data not followed by CRLF (RFC 9112 §7.1).
    case invalidChunkTerminator
    /// An `Expect` other than `100-continue` → 417 (RFC 9110 §10.1.1).
    case unsupportedExpectation

    /// The response status for this error.
    public var status: Int {
        switch self {
        case .requestLineTooLong: return 414
        case .headersTooLarge, .tooManyHeaders: return 431
        case .bodyTooLarge: return 413
        case .unsupportedVersion: return 505
        case .unsupportedTransferCoding: return 501
        case .unsupportedExpectation: return 417
        case .invalidRequestLine, .invalidMethod, .invalidTarget, .invalidVersion, .invalidLineEnding,
             .invalidHeaderName, .missingColon, .invalidHeaderValue, .obsoleteLineFolding, .invalidHost,
             .invalidContentLength, .conflictingContentLength, .contentLengthWithTransferEncoding,
             .invalidTransferEncoding, .invalidChunkSize, .invalidChunkTerminator:
            return 400
        }
    }
}
