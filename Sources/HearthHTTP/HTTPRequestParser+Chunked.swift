#if canImport(Glibc)
import Glibc
#endif

/// The chunked transfer coding (RFC 9112 §7.1): `chunk-size [ext] CRLF data CRLF`, …,
/// `0 [ext] CRLF`, trailer fields, `CRLF`. Extensions are ignored (§7.1.1); trailer fields
/// are skipped (§7.1.2, a server may discard them) but bounded like the header section.
extension HTTPRequestParser {
    private enum LineResult {
        case line(contentEnd: Int, next: Int)
        case needMore
        case failure(HTTPParseError)
    }

    mutating func parseChunked() -> Step {
        while true {
            switch state {
            case .chunkSize:
                switch findLine(maxBytes: Self.maxChunkLineBytes, tooLong: .invalidChunkSize) {
                case .needMore: return .needMore
                case .failure(let error): return .failure(error)
                case .line(let contentEnd, let next):
                    let size: Int
                    do throws(HTTPParseError) {
                        size = try chunkSize(from: start, to: contentEnd)
                    } catch {
                        return .failure(error)
                    }
                    start = next
                    if size == 0 {
                        state = .trailers(bytes: 0, count: 0)
                    } else {
                        if size > limits.maxBodyBytes - pending!.body.count { return .failure(.bodyTooLarge) }
                        state = .chunkData(remaining: size)
                    }
                }
            case .chunkData(let remaining):
                let count = min(remaining, bufferedByteCount)
                if count == 0 { return .needMore }
                takeBody(count)
                if remaining > count {
                    state = .chunkData(remaining: remaining - count)
                    return .needMore
                }
                state = .chunkDataEnd
            case .chunkDataEnd:
                if bufferedByteCount >= 1 && buffer[start] != ASCII.cr { return .failure(.invalidChunkTerminator) }
                if bufferedByteCount < 2 { return .needMore }
                if buffer[start + 1] != ASCII.lf { return .failure(.invalidChunkTerminator) }
                start += 2
                state = .chunkSize
            case .trailers(let bytes, let count):
                let room = limits.maxHeaderBytes - bytes
                switch findLine(maxBytes: max(0, room - 2), tooLong: .headersTooLarge) {
                case .needMore: return .needMore
                case .failure(let error): return .failure(error)
                case .line(let contentEnd, let next):
                    if contentEnd == start {
                        start = next
                        return .complete
                    }
                    if count + 1 > limits.maxHeaderCount { return .failure(.tooManyHeaders) }
                    state = .trailers(bytes: bytes + (next - start), count: count + 1)
                    start = next
                }
            default:
                preconditionFailure("parseChunked called outside a chunked body")
            }
        }
    }

    /// Finds the next CRLF-terminated line in the buffer; refuses bare LF and lines whose
    /// content exceeds `maxBytes`, even before their end arrives.
    private func findLine(maxBytes: Int, tooLong: HTTPParseError) -> LineResult {
        buffer.withUnsafeBufferPointer { all in
            let available = all.count - start
            guard available > 0, let base = all.baseAddress else { return .needMore }
            guard let found = memchr(base + start, Int32(ASCII.lf), available) else {
                return available > maxBytes + 1 ? .failure(tooLong) : .needMore
            }
            let lf = base.distance(to: found.assumingMemoryBound(to: UInt8.self))
            guard lf > start, all[lf - 1] == ASCII.cr else { return .failure(.invalidLineEnding) }
            if lf - 1 - start > maxBytes { return .failure(tooLong) }
            return .line(contentEnd: lf - 1, next: lf + 1)
        }
    }

    /// `chunk-size = 1*HEXDIG`, then optional `BWS ; ext…` which is checked for control
    /// characters and otherwise ignored. More than 15 hex digits is refused (it could not
    /// fit any body limit anyway, and must not overflow).
    private func chunkSize(from lower: Int, to upper: Int) throws(HTTPParseError) -> Int {
        var i = lower
        var size = 0
        while i < upper, let digit = ASCII.hexValue(buffer[i]) {
            size = size << 4 | digit
            i += 1
            if i - lower > 15 { throw .invalidChunkSize }
        }
        guard i > lower else { throw .invalidChunkSize }
        while i < upper && ASCII.isWhitespace(buffer[i]) { i += 1 }
        guard i == upper || buffer[i] == ASCII.semicolon else { throw .invalidChunkSize }
        while i < upper {
            guard ASCII.isFieldValueChar(buffer[i]) else { throw .invalidChunkSize }
            i += 1
        }
        return size
    }
}
