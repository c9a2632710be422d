import HearthHTTP
import Logging

/// One access-log line: its message and its fields, in key order, every value a string.
public struct AccessLogLine: Sendable, Equatable {
    public var message: String
    public var fields: [LogField]

    public init(message: String, fields: [LogField]) {
        self.message = message
        self.fields = fields
    }
}

/// One `key=value` of a log line (the access log's, and every line `hearth serve` writes).
public struct LogField: Sendable, Equatable {
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
/// and turning the access log off gave 6-14 % more creates per second.
public typealias AccessLogSink = @Sendable (AccessLogLine) -> Void

/// The access log: one line per request with method, path without the query (a query may
/// carry `auth=<token>`), status, bytes, duration, request id, the client as seen through
/// trusted proxies, and `ns`: the database a request reached (`(default)` or a
/// namespace's name; the router's tag, so never a name the client made up). Never a
/// header, a body or a token.
struct AccessLog: Sendable {
    let logger: Logger
    let sink: AccessLogSink?

    init(logger: Logger, sink: AccessLogSink? = nil) {
        self.logger = logger
        self.sink = sink
    }

    func record(_ entry: HTTPAccessRecord) {
        if let sink {
            sink(Self.line(entry))
            return
        }
        // Built only when it will be written, as swift-log's lazy metadata was.
        guard logger.logLevel <= .info else { return }
        let line = Self.line(entry)
        var metadata: Logger.Metadata = [:]
        for field in line.fields { metadata[field.key] = .string(field.value) }
        logger.info("\(line.message)", metadata: metadata)
    }

    /// The line for `entry`, its fields in key order.
    static func line(_ entry: HTTPAccessRecord) -> AccessLogLine {
        let milliseconds = Double(entry.durationNanoseconds) / 1e6
        let duration = milliseconds < 10 ? String(Double(Int(milliseconds * 100)) / 100) : String(Int(milliseconds))
        var fields: [LogField] = []
        fields.reserveCapacity(10)
        fields.append(LogField(key: "bytes", value: String(entry.bytes)))
        fields.append(LogField(key: "client", value: entry.client))
        fields.append(LogField(key: "log", value: "access"))
        fields.append(LogField(key: "method", value: entry.method))
        fields.append(LogField(key: "ms", value: duration))
        if let namespace = entry.tag { fields.append(LogField(key: "ns", value: namespace)) }
        fields.append(LogField(key: "path", value: entry.path))
        if entry.peer != entry.client { fields.append(LogField(key: "peer", value: entry.peer)) }
        fields.append(LogField(key: "request_id", value: entry.requestID))
        fields.append(LogField(key: "status", value: String(entry.status)))
        if entry.isStream { fields.append(LogField(key: "stream", value: "true")) }
        return AccessLogLine(message: "\(entry.method) \(entry.path) \(entry.status)", fields: fields)
    }
}
