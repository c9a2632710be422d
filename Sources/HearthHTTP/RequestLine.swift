/// `method SP request-target SP HTTP-version` (RFC 9112 §3), parsed over bytes into the
/// start of an `HTTPRequest`.
struct RequestLine {
    var request: HTTPRequest
    var minorVersion: Int { request.minorVersion }

    init(_ line: UnsafeBufferPointer<UInt8>) throws(HTTPParseError) {
        var i = 0
        while i < line.count && ASCII.isTokenChar(line[i]) { i += 1 }
        guard i > 0 else { throw .invalidMethod }
        guard i < line.count else { throw .invalidRequestLine }
        guard line[i] == ASCII.space else { throw .invalidMethod }
        let method = Self.method(UnsafeBufferPointer(rebasing: line[0..<i]))

        let targetStart = i + 1
        var j = targetStart
        var question = -1
        while j < line.count && line[j] != ASCII.space {
            guard ASCII.isTargetChar(line[j]) else { throw .invalidTarget }
            if line[j] == ASCII.question && question < 0 { question = j }
            j += 1
        }
        guard j > targetStart else { throw .invalidTarget }
        guard j < line.count else { throw .invalidRequestLine }
        let minor = try Self.version(UnsafeBufferPointer(rebasing: line[(j + 1)...]))

        let target = String(decoding: UnsafeBufferPointer(rebasing: line[targetStart..<j]), as: UTF8.self)
        let path: String
        let query: String?
        if question < 0 {
            path = target
            query = nil
        } else {
            path = String(decoding: UnsafeBufferPointer(rebasing: line[targetStart..<question]), as: UTF8.self)
            query = String(decoding: UnsafeBufferPointer(rebasing: line[(question + 1)..<j]), as: UTF8.self)
        }
        request = HTTPRequest(parsedMethod: method, target: target, path: path, query: query, minorVersion: minor)
    }

    /// `HTTP/1.x` → x (capped at 1: RFC 9110 §6.2, a higher minor is served as the highest
    /// we implement). A well-formed other major → 505; anything else → 400.
    private static func version(_ v: UnsafeBufferPointer<UInt8>) throws(HTTPParseError) -> Int {
        guard v.count == 8, v[0] == UInt8(ascii: "H"), v[1] == UInt8(ascii: "T"), v[2] == UInt8(ascii: "T"),
              v[3] == UInt8(ascii: "P"), v[4] == UInt8(ascii: "/"), ASCII.isDigit(v[5]),
              v[6] == UInt8(ascii: "."), ASCII.isDigit(v[7])
        else { throw .invalidVersion }
        guard v[5] == UInt8(ascii: "1") else { throw .unsupportedVersion }
        return v[7] == UInt8(ascii: "0") ? 0 : 1
    }

    /// Common methods come from literals (no allocation, no UTF-8 validation).
    private static func method(_ m: UnsafeBufferPointer<UInt8>) -> String {
        switch m.count {
        case 3:
            if matches(m, "GET") { return "GET" }
            if matches(m, "PUT") { return "PUT" }
        case 4:
            if matches(m, "POST") { return "POST" }
            if matches(m, "HEAD") { return "HEAD" }
        case 5:
            if matches(m, "PATCH") { return "PATCH" }
        case 6:
            if matches(m, "DELETE") { return "DELETE" }
        case 7:
            if matches(m, "OPTIONS") { return "OPTIONS" }
        default:
            break
        }
        return String(decoding: m, as: UTF8.self)
    }

    @inline(__always)
    private static func matches(_ bytes: UnsafeBufferPointer<UInt8>, _ literal: StaticString) -> Bool {
        let expected = literal.utf8Start
        for i in 0..<bytes.count where bytes[i] != expected[i] { return false }
        return true
    }
}
