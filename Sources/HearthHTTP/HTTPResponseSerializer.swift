/// Writes responses as HTTP/1.1 bytes (RFC 9112 §4, §6). The connection owns framing:
/// handler-set `Content-Length`, `Transfer-Encoding` and `Connection` fields are replaced by
/// the serializer's own, so a handler can never desynchronise a keep-alive connection.
enum HTTPResponseSerializer {
    /// The interim response a client waiting on `Expect: 100-continue` needs (RFC 9110 §15.2.1).
    static let continueBytes: StaticString = "HTTP/1.1 100 Continue\r\n\r\n"

    /// Appends `response` to `out`.
    /// - Parameters:
    ///   - isHead: the request was HEAD: send the headers a GET would get, including its
    ///     `Content-Length`, and no body (RFC 9110 §9.3.2).
    ///   - keepAlive: false adds `Connection: close` (RFC 9112 §9.6); true on an HTTP/1.0
    ///     request adds `Connection: keep-alive`, which 1.0 clients need to reuse it.
    static func serialize(
        _ response: HTTPResponse, isHead: Bool, keepAlive: Bool, minorVersion: Int, into out: inout [UInt8]
    ) {
        let status = response.status
        out.reserveCapacity(out.count + 128 + response.body.count)
        append("HTTP/1.1 ", to: &out)
        appendDecimal(min(max(status, 100), 999), to: &out)
        out.append(ASCII.space)
        append(reasonPhrase(status), to: &out)
        append("\r\n", to: &out)

        var declaredLength: String?
        for (name, value) in response.headers.fields {
            if isFramingField(name) {
                if name.utf8.count == 14 { declaredLength = value }
                continue
            }
            appendSanitized(name, to: &out)
            append(": ", to: &out)
            appendSanitized(value, to: &out)
            append("\r\n", to: &out)
        }

        // RFC 9110 §8.6: no Content-Length in 1xx or 204; 304 has no body and we omit it.
        let bodyAllowed = status >= 200 && status != 204 && status != 304
        if bodyAllowed {
            append("Content-Length: ", to: &out)
            if isHead && response.body.isEmpty, let declaredLength, isDecimal(declaredLength) {
                appendSanitized(declaredLength, to: &out)
            } else {
                appendDecimal(response.body.count, to: &out)
            }
            append("\r\n", to: &out)
        }
        if !keepAlive {
            append("Connection: close\r\n", to: &out)
        } else if minorVersion == 0 {
            append("Connection: keep-alive\r\n", to: &out)
        }
        append("\r\n", to: &out)
        if bodyAllowed && !isHead {
            out.append(contentsOf: response.body)
        }
    }

    /// Appends the head of an open-ended body: the handler's status and fields, no length,
    /// `Connection: close` (the close delimits the body, RFC 9112 §6.3 rule 8).
    static func serializeStreamHead(_ head: HTTPResponse, into out: inout [UInt8]) {
        append("HTTP/1.1 ", to: &out)
        appendDecimal(min(max(head.status, 100), 999), to: &out)
        out.append(ASCII.space)
        append(reasonPhrase(head.status), to: &out)
        append("\r\n", to: &out)
        for (name, value) in head.headers.fields where !isFramingField(name) {
            appendSanitized(name, to: &out)
            append(": ", to: &out)
            appendSanitized(value, to: &out)
            append("\r\n", to: &out)
        }
        append("Connection: close\r\n\r\n", to: &out)
    }

    /// The head of a `101 Switching Protocols` (RFC 9110 §15.2.2): status line and the
    /// given fields as they are (`Connection: Upgrade` included), no body framing.
    static func serializeUpgradeHead(_ head: HTTPResponse, into out: inout [UInt8]) {
        append("HTTP/1.1 101 Switching Protocols\r\n", to: &out)
        for (name, value) in head.headers.fields {
            appendSanitized(name, to: &out)
            append(": ", to: &out)
            appendSanitized(value, to: &out)
            append("\r\n", to: &out)
        }
        append("\r\n", to: &out)
    }

    /// The response for an error the HTTP layer answers itself: `{"error":"<generic>"}`,
    /// never the parser's detail (docs/design.md §8). Sentence case, as every REST error
    /// text.
    static func errorResponse(status: Int) -> HTTPResponse {
        errorResponse(status: status, message: "\(genericError(status))")
    }

    /// `{"error":"<message>"}` with `status`; `message` is one of the HTTP layer's own
    /// fixed texts (no quotes or backslashes to escape).
    static func errorResponse(status: Int, message: String) -> HTTPResponse {
        var body: [UInt8] = []
        append("{\"error\":\"", to: &body)
        body.append(contentsOf: message.utf8)
        append("\"}", to: &body)
        return HTTPResponse(status: status, headers: HTTPHeaders([("Content-Type", "application/json")]), body: body)
    }

    static func genericError(_ status: Int) -> StaticString {
        switch status {
        case 400: return "Bad request"
        case 408: return "Request timeout"
        case 413: return "Payload too large"
        case 414: return "Request target too long"
        case 417: return "Expectation failed"
        case 431: return "Request header fields too large"
        case 501: return "Not implemented"
        case 429: return "Too many requests"
        case 503: return "Service unavailable"
        case 505: return "HTTP version not supported"
        default: return "Error"
        }
    }

    /// Fields whose job the connection does (RFC 9112 §6, §9.6).
    static func isFramingField(_ name: String) -> Bool {
        switch name.utf8.count {
        case 10: return ASCII.equalsIgnoringCase(name, "Connection")
        case 14: return ASCII.equalsIgnoringCase(name, "Content-Length")
        case 17: return ASCII.equalsIgnoringCase(name, "Transfer-Encoding")
        default: return false
        }
    }

    /// Whether a handler's `Connection` field asks to close.
    static func requestsClose(_ response: HTTPResponse) -> Bool {
        for (name, value) in response.headers.fields where name.utf8.count == 10 {
            if ASCII.equalsIgnoringCase(name, "Connection") && ASCII.equalsIgnoringCase(value, "close") { return true }
        }
        return false
    }

    static func reasonPhrase(_ status: Int) -> StaticString {
        switch status {
        case 100: return "Continue"
        case 101: return "Switching Protocols"
        case 200: return "OK"
        case 201: return "Created"
        case 202: return "Accepted"
        case 204: return "No Content"
        case 206: return "Partial Content"
        case 301: return "Moved Permanently"
        case 302: return "Found"
        case 303: return "See Other"
        case 304: return "Not Modified"
        case 307: return "Temporary Redirect"
        case 308: return "Permanent Redirect"
        case 400: return "Bad Request"
        case 401: return "Unauthorized"
        case 403: return "Forbidden"
        case 404: return "Not Found"
        case 405: return "Method Not Allowed"
        case 408: return "Request Timeout"
        case 409: return "Conflict"
        case 411: return "Length Required"
        case 412: return "Precondition Failed"
        case 413: return "Content Too Large"
        case 414: return "URI Too Long"
        case 415: return "Unsupported Media Type"
        case 417: return "Expectation Failed"
        case 422: return "Unprocessable Content"
        case 426: return "Upgrade Required"
        case 429: return "Too Many Requests"
        case 431: return "Request Header Fields Too Large"
        case 500: return "Internal Server Error"
        case 501: return "Not Implemented"
        case 502: return "Bad Gateway"
        case 503: return "Service Unavailable"
        case 504: return "Gateway Timeout"
        case 505: return "HTTP Version Not Supported"
        default: return "Unknown"
        }
    }

    // MARK: Byte helpers

    @inline(__always)
    static func append(_ literal: StaticString, to out: inout [UInt8]) {
        out.append(contentsOf: UnsafeBufferPointer(start: literal.utf8Start, count: literal.utf8CodeUnitCount))
    }

    static func appendDecimal(_ value: Int, to out: inout [UInt8]) {
        precondition(value >= 0)
        if value < 10 {
            out.append(UInt8(ascii: "0") + UInt8(value))
            return
        }
        var digits: (UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8,
                     UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8) =
            (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        var v = value
        var count = 0
        withUnsafeMutableBytes(of: &digits) { d in
            while v > 0 {
                d[19 - count] = UInt8(ascii: "0") + UInt8(v % 10)
                v /= 10
                count += 1
            }
            out.append(contentsOf: d[(20 - count)...])
        }
    }

    /// Appends a handler-supplied name or value with CR, LF and other controls (except
    /// HTAB) replaced by a space: a value can never start a new header or end the head
    /// (response splitting).
    static func appendSanitized(_ text: String, to out: inout [UInt8]) {
        var text = text
        text.withUTF8 { bytes in
            var clean = true
            for byte in bytes where (byte < 0x20 && byte != ASCII.tab) || byte == 0x7F {
                clean = false
                break
            }
            if clean {
                out.append(contentsOf: bytes)
            } else {
                for byte in bytes {
                    out.append((byte < 0x20 && byte != ASCII.tab) || byte == 0x7F ? ASCII.space : byte)
                }
            }
        }
    }

    private static func isDecimal(_ text: String) -> Bool {
        !text.isEmpty && text.utf8.allSatisfy(ASCII.isDigit)
    }
}
