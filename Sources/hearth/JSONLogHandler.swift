import HearthJSON
import Logging
#if canImport(Glibc)
import Glibc
#endif

/// `--log-format json`: one JSON object per line on standard error
/// (`{"time":…,"level":…,"label":…,"message":…, <metadata>…}`), for log shippers.
struct JSONLogHandler: LogHandler {
    let label: String
    var logLevel: Logger.Level = .info
    var metadata: Logger.Metadata = [:]

    init(label: String) {
        self.label = label
    }

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        var members: [String: JSONValue] = [
            "time": .string(Self.timestamp()),
            "level": .string(event.level.rawValue),
            "label": .string(label),
            "message": .string(event.message.description),
        ]
        for (key, value) in metadata.merging(event.metadata ?? [:], uniquingKeysWith: { $1 }) where members[key] == nil {
            members[key] = .string(value.description)
        }
        var line = JSONWriter.write(.object(members))
        line.append(UInt8(ascii: "\n"))
        // One write(2) per line: lines from several threads never interleave mid-line.
        line.withUnsafeBytes { bytes in
            var offset = 0
            while offset < bytes.count {
                let n = Glibc.write(2, bytes.baseAddress! + offset, bytes.count - offset)
                if n < 0 && errno == EINTR { continue }
                if n <= 0 { return }
                offset += n
            }
        }
    }

    /// RFC 3339 UTC with milliseconds.
    static func timestamp() -> String {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        var seconds = ts.tv_sec
        var parts = tm()
        gmtime_r(&seconds, &parts)
        func pad(_ value: Int32, _ width: Int) -> String {
            let text = String(value)
            return String(repeating: "0", count: max(0, width - text.count)) + text
        }
        return "\(pad(parts.tm_year + 1900, 4))-\(pad(parts.tm_mon + 1, 2))-\(pad(parts.tm_mday, 2))T"
            + "\(pad(parts.tm_hour, 2)):\(pad(parts.tm_min, 2)):\(pad(parts.tm_sec, 2)).\(pad(Int32(ts.tv_nsec / 1_000_000), 3))Z"
    }
}
