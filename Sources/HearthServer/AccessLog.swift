import HearthHTTP
import Logging

/// One access-log line: its message and its fields, in key order, every value a string.
public struct AccessLogLine: Sendable, Equatable {
    public var message: String
    public var fields: [AccessLogField]

    public init(message: String, fields: [AccessLogField]) {
        self.message = message
        self.fields = fields
    }
}

public struct AccessLogField: Sendable, Equatable {
    public var key: String
    public var value: String

    public init(key: String, value: String) {
        self.key = key
        self.value = value
    }
}

/// Where access lines go when not through swift-log: `hearth serve` writes them straight
/// into its log buffer in its handler's format. Through swift-log, each line built a
/// metadata dictionary that the handler then sorted: ~5 % of the server's CPU on a create,
/// and turning the access log off gave 6-14 % more creates per second (issue 30).
public typealias AccessLogSink = @Sendable (AccessLogLine) -> Void

/// The access log (issue 7): one line per request with method, path without the query
/// (a query may carry `auth=<token>`), status, bytes, duration, request id and the client
/// as seen through trusted proxies. Never a header, a body or a token.
struct AccessLog: Sendable {
    let logger: Logger
    let sink: AccessLogSink?

    init(logger: Logger, sink: AccessLogSink? = nil) {
        self.logger = logger
        self.sink = sink
    }

    func record(_ entry: HTTPAccessRecord) {
        let line = Self.line(entry)
        if let sink {
            sink(line)
            return
        }
        var metadata: Logger.Metadata = [:]
        for field in line.fields { metadata[field.key] = .string(field.value) }
        logger.info("\(line.message)", metadata: metadata)
    }

    /// The line for `entry`, its fields in key order.
    static func line(_ entry: HTTPAccessRecord) -> AccessLogLine {
        let milliseconds = Double(entry.durationNanoseconds) / 1e6
        let duration = milliseconds < 10 ? String(Double(Int(milliseconds * 100)) / 100) : String(Int(milliseconds))
        var fields: [AccessLogField] = []
        fields.reserveCapacity(10)
        fields.append(AccessLogField(key: "bytes", value: String(entry.bytes)))
        fields.append(AccessLogField(key: "client", value: entry.client))
        fields.append(AccessLogField(key: "log", value: "access"))
        fields.append(AccessLogField(key: "method", value: entry.method))
        fields.append(AccessLogField(key: "ms", value: duration))
        fields.append(AccessLogField(key: "path", value: entry.path))
        if entry.peer != entry.client { fields.append(AccessLogField(key: "peer", value: entry.peer)) }
        fields.append(AccessLogField(key: "request_id", value: entry.requestID))
        fields.append(AccessLogField(key: "status", value: String(entry.status)))
        if entry.isStream { fields.append(AccessLogField(key: "stream", value: "true")) }
        return AccessLogLine(message: "\(entry.method) \(entry.path) \(entry.status)", fields: fields)
    }
}
