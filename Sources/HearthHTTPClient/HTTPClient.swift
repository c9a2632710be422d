/// Why an HTTP exchange failed. Texts carry no URL, header or body (those may hold
/// secrets), so they are safe to log.
public enum HTTPClientError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Not an `http://` or `https://` URL this client can use.
    case invalidURL(String)
    /// A header name or value that cannot be sent (control characters, empty name).
    case invalidRequest(String)
    /// The connection could not be made (refused, unresolved, unreachable), or broke
    /// before any byte of an answer arrived (reset while the request was written or the
    /// answer awaited), or timed out, or TLS failed. A connection that breaks (other than
    /// by a timeout or in TLS) after part of an answer arrived is `.badResponse`.
    case connection(ConnectionFailure)
    /// The whole exchange took longer than its timeout.
    case timeout
    /// The server's answer is not HTTP/1.x as this client reads it.
    case badResponse(String)
    /// The answer (head and body) is longer than `maxResponseBytes`.
    case responseTooLarge(limit: Int)

    public var description: String {
        switch self {
        case .invalidURL(let why): return "invalid URL: \(why)"
        case .invalidRequest(let why): return "invalid request: \(why)"
        case .connection(let failure): return failure.description
        case .timeout: return "timed out"
        case .badResponse(let why): return "bad response: \(why)"
        case .responseTooLarge(let limit): return "response larger than \(limit) bytes"
        }
    }

    /// True for a refused connection (nobody listens).
    public var isRefused: Bool { self == .connection(.refused) }
    /// True for a connect, read, write or whole-exchange timeout.
    public var isTimeout: Bool { self == .timeout || self == .connection(.timeout) }
}

/// One request.
public struct HTTPClientRequest: Sendable {
    public var method: String
    public var url: HTTPURL
    /// Sent in this order after `Host`, `Content-Length` and (without a pool)
    /// `Connection: close`, which the client writes itself.
    public var headers: [(name: String, value: String)]
    public var body: [UInt8]

    public init(method: String = "GET", url: HTTPURL, headers: [(name: String, value: String)] = [], body: [UInt8] = []) {
        (self.method, self.url, self.headers, self.body) = (method, url, headers, body)
    }
}

/// One response, its body whole (chunked bodies decoded).
public struct HTTPClientResponse: Sendable {
    public var status: Int
    public var headers: [(name: String, value: String)]
    public var body: [UInt8]

    /// The first header named `name` (case-insensitive).
    public func header(_ name: String) -> String? {
        let wanted = name.lowercased()
        return headers.first { $0.name.lowercased() == wanted }?.value
    }

    public var isSuccess: Bool { (200..<300).contains(status) }
}

/// A small blocking HTTP/1.1 client (trigger deliveries; also meant for JWKS
/// fetches): `http` or `https` (libssl, certificate and name verified), `Content-Length`,
/// chunked and close-delimited bodies, a timeout and a bound on the response's size. It
/// blocks its caller: run it off request paths (a delivery thread, a work queue).
///
/// Without a `pool`, one request per connection (`Connection: close`). With one, the
/// connection stays open after an answer that allows it and is put in the pool for the
/// next request to the same origin. A request on a pooled connection that fails before
/// any byte of an answer arrives (the server closed the idle connection as the request
/// was sent) is sent once more on a new connection; a timeout is not. So a request may
/// reach a server twice only when that server took it and closed without a byte of
/// answer, which a caller that retries failures (a trigger's deliverer) does anyway.
public struct HTTPClient: Sendable {
    /// The default of `timeoutSeconds`.
    public static let defaultTimeoutSeconds = 30
    /// The default of `maxResponseBytes`: answers are read whole into memory.
    public static let defaultMaxResponseBytes = 1 << 20
    /// The longest response head (status line and headers) accepted, within `maxResponseBytes`.
    public static let maxHeadBytes = 64 * 1024

    /// Seconds for the connect and for each read and write; also the whole exchange's
    /// budget, checked after each read (a server dripping bytes is cut off).
    public var timeoutSeconds: Int
    /// The longest answer (head and body) read; past it the exchange fails with
    /// `.responseTooLarge`.
    public var maxResponseBytes: Int
    /// PEM file of the certificate authorities trusted for `https` (nil: the system's).
    public var caFile: String?
    /// Where connections are kept between requests (nil: one connection per request).
    public var pool: HTTPConnectionPool?

    public init(timeoutSeconds: Int = HTTPClient.defaultTimeoutSeconds,
                maxResponseBytes: Int = HTTPClient.defaultMaxResponseBytes, caFile: String? = nil,
                pool: HTTPConnectionPool? = nil) {
        self.timeoutSeconds = max(1, timeoutSeconds)
        self.maxResponseBytes = maxResponseBytes
        self.caFile = caFile
        self.pool = pool
    }

    /// Sends `request` and reads the whole answer (1xx interim answers skipped).
    public func send(_ request: HTTPClientRequest) throws(HTTPClientError) -> HTTPClientResponse {
        let head = try Self.head(of: request, keepAlive: pool != nil)
        let deadline = ContinuousClock.now + .seconds(timeoutSeconds)
        let origin = HTTPConnectionPool.Origin(isTLS: request.url.isTLS, host: request.url.host, port: request.url.port,
                                               caFile: caFile, timeoutSeconds: timeoutSeconds)
        if let pool, let reused = pool.take(origin) {
            switch exchange(request, head: head, on: reused, origin: origin, deadline: deadline) {
            case .answered(let response): return response
            case .failed(let error): throw error
            case .unanswered: break  // the server let the idle connection go: a new one below
            }
        }
        let connection: OutgoingConnection
        do {
            connection = try OutgoingConnection(host: request.url.host, port: request.url.port, timeoutSeconds: timeoutSeconds)
            if request.url.isTLS { try connection.startTLS(host: request.url.host, caFile: caFile) }
        } catch {
            throw .connection(error)
        }
        switch exchange(request, head: head, on: connection, origin: origin, deadline: deadline) {
        case .answered(let response): return response
        case .failed(let error), .unanswered(let error): throw error
        }
    }

    private enum Outcome {
        case answered(HTTPClientResponse)
        /// Failed before any byte of an answer, other than by a timeout.
        case unanswered(HTTPClientError)
        case failed(HTTPClientError)
    }

    /// One request and its answer on `connection`, which is put back in the pool when the
    /// answer leaves it reusable and closed otherwise.
    private func exchange(_ request: HTTPClientRequest, head: [UInt8], on connection: OutgoingConnection,
                          origin: HTTPConnectionPool.Origin, deadline: ContinuousClock.Instant) -> Outcome {
        var kept = false
        defer { if !kept { connection.close() } }
        do {
            try connection.write(head + request.body)
        } catch {
            return error == .timeout ? .failed(.connection(error)) : .unanswered(.connection(error))
        }
        var answered = false  // a byte of the answer arrived
        var reader = ResponseReader(limit: maxResponseBytes, deadline: deadline) { chunk throws(HTTPClientError) in
            do throws(ConnectionFailure) {
                let count = try connection.read(into: &chunk)
                if count > 0 { answered = true }
                return count
            } catch {
                if answered, case .system = error { throw .badResponse("the connection broke during the answer: \(error)") }
                throw .connection(error)
            }
        }
        do {
            let response = try reader.response(forHEAD: request.method.uppercased() == "HEAD")
            if let pool, reader.keepsConnection {
                pool.give(connection, origin: origin)
                kept = true
            }
            return .answered(response)
        } catch {
            return answered || error.isTimeout ? .failed(error) : .unanswered(error)
        }
    }

    /// The request line and headers.
    package static func head(of request: HTTPClientRequest, keepAlive: Bool = false) throws(HTTPClientError) -> [UInt8] {
        guard !request.method.isEmpty, request.method.utf8.allSatisfy(Self.isTokenByte) else {
            throw .invalidRequest("the method is not a token")
        }
        var text = "\(request.method) \(request.url.target) HTTP/1.1\r\nHost: \(request.url.hostHeader)\r\n"
        if !request.body.isEmpty || ["POST", "PUT", "PATCH"].contains(request.method.uppercased()) {
            text += "Content-Length: \(request.body.count)\r\n"
        }
        if !keepAlive { text += "Connection: close\r\n" }
        for (name, value) in request.headers {
            guard !name.isEmpty, name.utf8.allSatisfy(Self.isTokenByte) else {
                throw .invalidRequest("a header name is not a token")
            }
            // Never the value itself in the error: it may be a secret.
            guard value.utf8.allSatisfy({ $0 == 0x09 || ($0 >= 0x20 && $0 != 0x7F) }) else {
                throw .invalidRequest("the value of header \(name) holds a control character")
            }
            let lower = name.lowercased()
            guard lower != "host" && lower != "content-length" && lower != "connection" && lower != "transfer-encoding" else {
                throw .invalidRequest("header \(name) is set by the client itself")
            }
            text += "\(name): \(value)\r\n"
        }
        text += "\r\n"
        return Array(text.utf8)
    }

    /// RFC 9110 `tchar`.
    static func isTokenByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            return true
        default:
            return Array("!#$%&'*+-.^_`|~".utf8).contains(byte)
        }
    }
}
