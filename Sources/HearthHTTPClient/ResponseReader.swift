/// Reads one HTTP/1.x response from a byte source: the head, then a body delimited by
/// `Content-Length`, by chunks, or by the end of the stream. Pure apart from `read`, so it
/// is tested from literals as well as over sockets.
struct ResponseReader {
    let limit: Int
    let deadline: ContinuousClock.Instant?
    /// Reads into the buffer; 0 at the end of the stream.
    let read: (inout [UInt8]) throws(HTTPClientError) -> Int
    private var buffer: [UInt8] = []
    private var position = 0
    private var total = 0
    private var ended = false
    /// The last status line was HTTP/1.1 (persistent unless it says `close`); HTTP/1.0
    /// connections are not kept.
    private var persistent = false
    /// Whether the connection may carry another request after this answer: HTTP/1.1, no
    /// `Connection: close`, a body framed by its length or chunks (not by the end of the
    /// stream), and not a byte read past the answer's end.
    private(set) var keepsConnection = false

    init(limit: Int, deadline: ContinuousClock.Instant?, read: @escaping (inout [UInt8]) throws(HTTPClientError) -> Int) {
        (self.limit, self.deadline, self.read) = (limit, deadline, read)
    }

    mutating func response(forHEAD: Bool) throws(HTTPClientError) -> HTTPClientResponse {
        while true {
            let (status, headers) = try readHead()
            if (100..<200).contains(status) && status != 101 { continue }  // interim: 100 Continue, 103 Early Hints
            var response = HTTPClientResponse(status: status, headers: headers, body: [])
            keepsConnection = persistent && !headers.contains { $0.name.lowercased() == "connection" && Self.namesClose($0.value) }
            defer { if position < buffer.count { keepsConnection = false } }
            if forHEAD || status == 204 || status == 304 { return response }
            if let coding = response.header("transfer-encoding") {
                guard coding.lowercased().split(separator: ",").last?.trimmingSpaces == "chunked" else {
                    throw .badResponse("transfer coding \(coding) without chunked last")
                }
                response.body = try readChunked()
            } else if let lengthText = response.header("content-length") {
                let values = Set(lengthText.split(separator: ",").map { $0.trimmingSpaces })
                guard values.count == 1, let length = Int(values.first!), length >= 0 else {
                    throw .badResponse("Content-Length is not one number")
                }
                guard length <= limit else { throw .responseTooLarge(limit: limit) }
                response.body = try take(length)
            } else {
                keepsConnection = false
                response.body = try readToEnd()
            }
            return response
        }
    }

    /// Whether a `Connection` header value names the `close` option (comma-separated,
    /// case-insensitive).
    static func namesClose(_ value: String) -> Bool {
        value.split(separator: ",").contains { $0.trimmingSpaces.lowercased() == "close" }
    }

    // MARK: Bytes

    private mutating func fill() throws(HTTPClientError) -> Bool {
        if ended { return false }
        if let deadline, ContinuousClock.now > deadline { throw .timeout }
        var chunk = [UInt8](repeating: 0, count: 16 * 1024)
        let count = try read(&chunk)
        if count == 0 {
            ended = true
            return false
        }
        total += count
        guard total <= limit else { throw .responseTooLarge(limit: limit) }
        if position > 0 && position == buffer.count {
            buffer.removeAll(keepingCapacity: true)
            position = 0
        }
        buffer.append(contentsOf: chunk[0..<count])
        return true
    }

    /// One line without its CRLF (a bare LF is accepted too).
    private mutating func line(max: Int) throws(HTTPClientError) -> [UInt8] {
        var searched = 0  // bytes after `position` known to hold no LF (`fill` may move `position`)
        while true {
            if let end = buffer[(position + searched)...].firstIndex(of: UInt8(ascii: "\n")) {
                var line = Array(buffer[position..<end])
                position = end + 1
                if line.last == UInt8(ascii: "\r") { line.removeLast() }
                return line
            }
            searched = buffer.count - position
            guard searched <= max else { throw .badResponse("a line longer than \(max) bytes") }
            guard try fill() else { throw .badResponse("the connection closed before the response was complete") }
        }
    }

    private mutating func take(_ count: Int) throws(HTTPClientError) -> [UInt8] {
        while buffer.count - position < count {
            guard try fill() else { throw .badResponse("the connection closed before the body was complete") }
        }
        let bytes = Array(buffer[position..<position + count])
        position += count
        return bytes
    }

    private mutating func readToEnd() throws(HTTPClientError) -> [UInt8] {
        while try fill() {}
        let bytes = Array(buffer[position...])
        position = buffer.count
        return bytes
    }

    // MARK: HTTP

    private mutating func readHead() throws(HTTPClientError) -> (Int, [(name: String, value: String)]) {
        let start = total - (buffer.count - position)
        let statusLine = try line(max: HTTPClient.maxHeadBytes)
        let parts = statusLine.split(separator: UInt8(ascii: " "), maxSplits: 2, omittingEmptySubsequences: false)
        guard parts.count >= 2, parts[0].starts(with: Array("HTTP/1.".utf8)), parts[1].count == 3,
              let status = Int(String(decoding: parts[1], as: UTF8.self)), (100...599).contains(status) else {
            throw .badResponse("not an HTTP/1.x status line")
        }
        persistent = parts[0].elementsEqual("HTTP/1.1".utf8)
        var headers: [(name: String, value: String)] = []
        while true {
            let line = try line(max: HTTPClient.maxHeadBytes)
            if total - (buffer.count - position) - start > HTTPClient.maxHeadBytes {
                throw .badResponse("a response head longer than \(HTTPClient.maxHeadBytes) bytes")
            }
            if line.isEmpty { break }
            guard let colon = line.firstIndex(of: UInt8(ascii: ":")), colon > 0,
                  line[..<colon].allSatisfy(HTTPClient.isTokenByte) else {
                throw .badResponse("a malformed header line")
            }
            let name = String(decoding: line[..<colon], as: UTF8.self)
            let value = String(decoding: line[(colon + 1)...], as: UTF8.self).trimmingSpaces
            headers.append((name, value))
        }
        return (status, headers)
    }

    /// RFC 9112 §7.1: `size[;ext]CRLF data CRLF` ... `0 CRLF [trailers] CRLF`.
    private mutating func readChunked() throws(HTTPClientError) -> [UInt8] {
        var body: [UInt8] = []
        while true {
            let sizeLine = try line(max: 1024)
            let sizeText = String(decoding: sizeLine.prefix { $0 != UInt8(ascii: ";") }, as: UTF8.self).trimmingSpaces
            guard !sizeText.isEmpty, sizeText.count <= 15, let size = Int(sizeText, radix: 16), size >= 0 else {
                throw .badResponse("a malformed chunk size")
            }
            if size == 0 {
                while try !line(max: HTTPClient.maxHeadBytes).isEmpty {}  // trailers, ignored
                return body
            }
            guard body.count + size <= limit else { throw .responseTooLarge(limit: limit) }
            body += try take(size)
            guard try line(max: 2).isEmpty else { throw .badResponse("a chunk longer than its size") }
        }
    }
}

extension StringProtocol {
    /// Without leading and trailing spaces and tabs.
    var trimmingSpaces: String {
        let scalars = unicodeScalars
        guard let first = scalars.firstIndex(where: { $0 != " " && $0 != "\t" }) else { return "" }
        let last = scalars.lastIndex(where: { $0 != " " && $0 != "\t" })!
        return String(String.UnicodeScalarView(scalars[first...last]))
    }
}
