import Logging
import Synchronization

/// Collects log records, for assertions on what is (and is never) logged.
public final class CapturedLogs: Sendable {
    public let lines = Mutex<[(message: String, metadata: [String: String])]>([])

    public init() {}

    public func handler(label: String) -> any LogHandler { Handler(sink: self) }

    struct Handler: LogHandler {
        let sink: CapturedLogs
        var logLevel: Logger.Level = .trace
        var metadata: Logger.Metadata = [:]
        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }
        func log(event: LogEvent) {
            let merged = metadata.merging(event.metadata ?? [:], uniquingKeysWith: { $1 }).mapValues { "\($0)" }
            sink.lines.withLock { $0.append((event.message.description, merged)) }
        }
    }

    public var access: [[String: String]] { lines.withLock { $0.filter { $0.metadata["log"] == "access" }.map(\.metadata) } }
    public var all: String { lines.withLock { $0.map { $0.message + " " + $0.metadata.description }.joined(separator: "\n") } }
}
