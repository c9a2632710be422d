#if canImport(Glibc)
import Glibc
#endif

/// Progress through the head of the current request, kept between `feed` calls so bytes
/// are searched once however the request is split. Offsets are relative to `start`.
struct HeadScan {
    /// Bytes already searched for line ends.
    var scanned = 0
    /// Where the line being searched begins.
    var lineStart = 0
    /// Just past the request line's LF, or -1 until it is complete.
    var requestLineEnd = -1
    var fieldCount = 0
}

/// How the body of a request is delimited (RFC 9112 §6.3).
enum BodyFraming: Equatable {
    case none
    case length(Int)
    case chunked
}

extension HTTPRequestParser {
    private enum ScanResult {
        case needMore
        case end(Int)
        case failure(HTTPParseError)
    }

    /// Finds the end of the head, enforcing the line and section limits as bytes arrive
    /// (so an endless request line is refused at `maxRequestLineBytes`, not at a timeout),
    /// then parses it and sets up the body state.
    mutating func parseHead() -> Step {
        if head.scanned == 0, let step = skipLeadingEmptyLines() { return step }
        let scan = scanForHeadEnd()
        switch scan {
        case .needMore:
            return .needMore
        case .failure(let error):
            return .failure(error)
        case .end(let headEnd):
            let requestLineEnd = head.requestLineEnd
            let limits = self.limits
            let parsed: Result<(PendingRequest, BodyFraming), HTTPParseError> = buffer.withUnsafeBufferPointer { all in
                let bytes = UnsafeBufferPointer(rebasing: all[start..<(start + headEnd)])
                do throws(HTTPParseError) {
                    return .success(try Self.buildRequest(bytes, requestLineEnd: requestLineEnd, limits: limits))
                } catch {
                    return .failure(error)
                }
            }
            switch parsed {
            case .failure(let error):
                return .failure(error)
            case .success(let (request, framing)):
                start += headEnd
                head = HeadScan()
                pending = request
                switch framing {
                case .none: state = .head
                case .length(let length): state = .contentBody(remaining: length)
                case .chunked: state = .chunkSize
                }
                return .complete
            }
        }
    }

    /// A request without body is complete as soon as its head is.
    mutating func finishIfNoBody() -> Event? {
        if case .head = state { return complete() }
        return nil
    }

    /// RFC 9112 §2.2: a server SHOULD ignore at least one empty line (CRLF) received before
    /// the request-line.
    private mutating func skipLeadingEmptyLines() -> Step? {
        while bufferedByteCount > 0 {
            let byte = buffer[start]
            if byte == ASCII.lf { return .failure(.invalidLineEnding) }
            if byte != ASCII.cr { return nil }
            if bufferedByteCount < 2 { return .needMore }
            if buffer[start + 1] != ASCII.lf { return .failure(.invalidLineEnding) }
            start += 2
        }
        return nil
    }

    private mutating func scanForHeadEnd() -> ScanResult {
        let limits = self.limits
        var scan = head
        let result: ScanResult = buffer.withUnsafeBufferPointer { all in
            let p = UnsafeBufferPointer(rebasing: all[start...])
            let n = p.count
            guard let base = p.baseAddress else { return .needMore }
            var i = scan.scanned
            while i < n, let found = memchr(base + i, Int32(ASCII.lf), n - i) {
                let lf = base.distance(to: found.assumingMemoryBound(to: UInt8.self))
                guard lf > scan.lineStart, p[lf - 1] == ASCII.cr else { return .failure(.invalidLineEnding) }
                let lineLength = lf - 1 - scan.lineStart
                if scan.requestLineEnd < 0 {
                    if lineLength > limits.maxRequestLineBytes { return .failure(.requestLineTooLong) }
                    scan.requestLineEnd = lf + 1
                } else if lineLength == 0 {
                    return .end(lf + 1)
                } else {
                    if lf + 1 - scan.requestLineEnd > limits.maxHeaderBytes { return .failure(.headersTooLarge) }
                    scan.fieldCount += 1
                    if scan.fieldCount > limits.maxHeaderCount { return .failure(.tooManyHeaders) }
                }
                scan.lineStart = lf + 1
                i = lf + 1
            }
            scan.scanned = n
            // A partial line that can no longer fit fails now rather than at a timeout.
            if scan.requestLineEnd < 0 {
                if n - scan.lineStart > limits.maxRequestLineBytes + 1 { return .failure(.requestLineTooLong) }
            } else if n - scan.requestLineEnd > limits.maxHeaderBytes + 2 {
                return .failure(.headersTooLarge)
            }
            return .needMore
        }
        head = scan
        return result
    }

    /// Parses a complete head (request line, field lines, final CRLF): syntax (RFC 9112
    /// §3, §5), Host (§3.2), framing (§6.1, §6.3), connection options (§9.3), Expect
    /// (RFC 9110 §10.1.1).
    static func buildRequest(
        _ p: UnsafeBufferPointer<UInt8>, requestLineEnd: Int, limits: Bounds
    ) throws(HTTPParseError) -> (PendingRequest, BodyFraming) {
        var line = try RequestLine(UnsafeBufferPointer(rebasing: p[0..<(requestLineEnd - 2)]))
        var fields = FieldSummary(minorVersion: line.minorVersion)
        var headers: [(name: String, value: String)] = []
        var lineStart = requestLineEnd
        while true {
            var lf = lineStart
            while p[lf] != ASCII.lf { lf += 1 }
            if lf - 1 == lineStart { break }
            let (name, value) = try parseFieldLine(UnsafeBufferPointer(rebasing: p[lineStart..<(lf - 1)]))
            try fields.inspect(name: name, value: value)
            headers.append((String(decoding: name, as: UTF8.self), String(decoding: value, as: UTF8.self)))
            lineStart = lf + 1
        }
        let framing = try fields.framing(maxBodyBytes: limits.maxBodyBytes)
        line.request.headers = HTTPHeaders(headers)
        if case .length(let length) = framing {
            line.request.body.reserveCapacity(min(length, 64 * 1024))
        }
        let pending = PendingRequest(
            request: line.request, keepAlive: fields.keepAlive,
            expectContinue: fields.expectContinue && framing != .none)
        return (pending, framing)
    }

    /// Splits `name ":" OWS value OWS` (RFC 9112 §5.1) and validates both parts.
    private static func parseFieldLine(
        _ line: UnsafeBufferPointer<UInt8>
    ) throws(HTTPParseError) -> (UnsafeBufferPointer<UInt8>, UnsafeBufferPointer<UInt8>) {
        if ASCII.isWhitespace(line[0]) { throw .obsoleteLineFolding }
        var colon = 0
        while colon < line.count && line[colon] != ASCII.colon { colon += 1 }
        guard colon < line.count else { throw .missingColon }
        guard colon > 0 else { throw .invalidHeaderName }
        for i in 0..<colon where !ASCII.isTokenChar(line[i]) { throw .invalidHeaderName }
        let value = ASCII.trimmingWhitespace(UnsafeBufferPointer(rebasing: line[(colon + 1)...]))
        for byte in value where !ASCII.isFieldValueChar(byte) { throw .invalidHeaderValue }
        return (UnsafeBufferPointer(rebasing: line[0..<colon]), value)
    }
}
