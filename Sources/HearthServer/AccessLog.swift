import HearthHTTP
import Logging

/// The access log (issue 7): one line per request with method, path without the query
/// (a query may carry `auth=<token>`), status, bytes, duration, request id and the client
/// as seen through trusted proxies. Never a header, a body or a token.
struct AccessLog: Sendable {
    let logger: Logger

    func record(_ entry: HTTPAccessRecord) {
        let milliseconds = Double(entry.durationNanoseconds) / 1e6
        let duration = milliseconds < 10 ? String(Double(Int(milliseconds * 100)) / 100) : String(Int(milliseconds))
        var metadata: Logger.Metadata = [
            "method": .string(entry.method), "path": .string(entry.path), "status": .stringConvertible(entry.status),
            "bytes": .stringConvertible(entry.bytes), "ms": .string(duration), "request_id": .string(entry.requestID),
            "client": .string(entry.client), "log": "access",
        ]
        if entry.peer != entry.client { metadata["peer"] = .string(entry.peer) }
        if entry.isStream { metadata["stream"] = "true" }
        logger.info("\(entry.method) \(entry.path) \(entry.status)", metadata: metadata)
    }
}
