import Dispatch
import HearthJSON
import HearthServer
import HearthSystem
import Logging
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// Standard error, buffered: log lines (one per request with the access log) are gathered
/// and written with one `write(2)` every `flushInterval`, or at once when `flushBytes` pile
/// up or a line is an error. Writing each line as it came cost half of the server's
/// throughput on `/healthz` (27.5k vs 52.9k req/s, docs/bench/history.md, "Access log cost"); at most
/// `flushInterval` of lines is lost if the process is killed.
final class LogOutput: Sendable {
    static let flushInterval = 0.05
    static let flushBytes = 64 * 1024

    private let buffer = Mutex<[UInt8]>([])
    private let timer = Mutex<DispatchSourceTimer?>(nil)

    init() {
        timer.withLock { timer in
            let source = DispatchSource.makeTimerSource(queue: DispatchQueue(label: "hearth.log.flush"))
            let nanos = Int(Self.flushInterval * 1e9)
            source.schedule(deadline: .now() + .nanoseconds(nanos), repeating: .nanoseconds(nanos), leeway: .nanoseconds(nanos / 5))
            source.setEventHandler { [weak self] in self?.flush() }
            source.activate()
            timer = source
        }
    }

    func append(_ line: [UInt8], urgent: Bool) {
        let full: [UInt8]? = buffer.withLock { buffer in
            buffer.append(contentsOf: line)
            guard urgent || buffer.count >= Self.flushBytes else { return nil }
            defer { buffer.removeAll(keepingCapacity: true) }
            return buffer
        }
        if let full { Self.write(full) }
    }

    /// Writes what is buffered (the timer does this; call it before exiting).
    func flush() {
        let pending: [UInt8] = buffer.withLock { buffer in
            defer { buffer.removeAll(keepingCapacity: true) }
            return buffer
        }
        if !pending.isEmpty { Self.write(pending) }
    }

    /// Standard error may be closed or full: what cannot be written is dropped, and the
    /// server goes on (`writeBestEffort` never traps).
    private static func write(_ bytes: [UInt8]) {
        bytes.withUnsafeBytes { raw in _ = Syscall.writeBestEffort(STDERR_FILENO, raw) }
    }
}

/// swift-log handler for `hearth serve`: a human line (`<time> <level> <label>: <message>
/// key=value…`) or, with `--log-format json`, one JSON object per line; both into
/// `LogOutput`.
struct HearthLogHandler: LogHandler {
    let label: String
    let json: Bool
    let output: LogOutput
    var logLevel: Logger.Level = .info
    var metadata: Logger.Metadata = [:]

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        let merged = metadata.isEmpty ? (event.metadata ?? [:]) : metadata.merging(event.metadata ?? [:], uniquingKeysWith: { $1 })
        // In key order, from one sort of the pairs.
        let fields = merged.sorted(by: { $0.key < $1.key }).map { key, value in
            switch value {
            case .string(let text): LogField(key: key, value: text)
            default: LogField(key: key, value: value.description)
            }
        }
        // Notices (the lifecycle: "listening on", recovery) and worse are written at once:
        // scripts wait for "listening on" (docker-steps grepped it right after the first
        // health check passed and once found it still in the buffer).
        output.append(Self.line(label: label, level: event.level, message: event.message.description, fields: fields, json: json),
                      urgent: event.level >= .notice)
    }

    /// One line of this handler's format, `fields` in key order: the access log's lines
    /// come here straight (`AccessLogSink`), so they are written exactly as through `log`.
    static func line(label: String, level: Logger.Level, message: String, fields: [LogField], json: Bool) -> [UInt8] {
        var line: [UInt8] = []
        line.reserveCapacity(192)
        if json {
            var members: [JSONKey: JSONValue] = [
                "time": .string(Self.timestamp()), "level": .string(level.rawValue),
                "label": .string(label), "message": .string(message),
            ]
            for field in fields where members[field.key] == nil { members[field.key] = .string(field.value) }
            JSONWriter.write(.object(members), into: &line)
        } else {
            // Written as bytes (the access log's line was ~5 % of a create's CPU).
            Self.appendTimestamp(into: &line)
            line.append(UInt8(ascii: " "))
            line.append(contentsOf: level.rawValue.utf8)
            line.append(UInt8(ascii: " "))
            line.append(contentsOf: label.utf8)
            line.append(contentsOf: ": ".utf8)
            line.append(contentsOf: message.utf8)
            for field in fields {
                line.append(UInt8(ascii: " "))
                line.append(contentsOf: field.key.utf8)
                line.append(UInt8(ascii: "="))
                line.append(contentsOf: field.value.utf8)
            }
        }
        line.append(UInt8(ascii: "\n"))
        return line
    }

    /// RFC 3339 UTC with milliseconds.
    static func timestamp() -> String {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(24)
        appendTimestamp(into: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    /// `timestamp()` appended as bytes, without building strings.
    static func appendTimestamp(into line: inout [UInt8]) {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        var seconds = ts.tv_sec
        var parts = tm()
        gmtime_r(&seconds, &parts)
        func digits(_ value: Int32, _ width: Int) {
            var divisor: Int32 = 1
            for _ in 1..<width { divisor *= 10 }
            let value = max(0, value)
            while divisor > 0 {
                line.append(UInt8(ascii: "0") + UInt8((value / divisor) % 10))
                divisor /= 10
            }
        }
        digits(parts.tm_year + 1900, 4)
        line.append(UInt8(ascii: "-"))
        digits(parts.tm_mon + 1, 2)
        line.append(UInt8(ascii: "-"))
        digits(parts.tm_mday, 2)
        line.append(UInt8(ascii: "T"))
        digits(parts.tm_hour, 2)
        line.append(UInt8(ascii: ":"))
        digits(parts.tm_min, 2)
        line.append(UInt8(ascii: ":"))
        digits(parts.tm_sec, 2)
        line.append(UInt8(ascii: "."))
        digits(Int32(ts.tv_nsec / 1_000_000), 3)
        line.append(UInt8(ascii: "Z"))
    }
}
