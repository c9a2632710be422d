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
/// up or a line is a notice or worse. Writing each line as it came cost half of the
/// server's throughput on `/healthz` (27.5k vs 52.9k req/s, docs/bench/history.md, "Access
/// log cost"); at most `flushInterval` of lines is lost if the process is killed.
///
/// Only the log's own queue writes, and to a pipe or a socket only what it takes without
/// blocking (`poll` first, then at most `pipeChunkBytes` to a pipe, which takes that much
/// whole once it polls writable, or `socketChunkBytes` to a socket such as the journal's).
/// A reader that stops reading (a stalled log collector, a pipe nobody drains) used to
/// stop the server: the first thread to log past the pipe's 64 KiB blocked in `write`
/// holding its request, and then every other. Now the lines wait, up to `maxHeldBytes`;
/// past that they are dropped and counted, and a line saying how many goes out once the
/// reader is back.
final class LogOutput: Sendable {
    static let flushInterval = 0.05
    static let flushBytes = 64 * 1024
    /// Bytes of lines kept while standard error takes none; lines past it are dropped.
    static let maxHeldBytes = 1 << 20
    /// The most one `write` hands to a pipe: `PIPE_BUF`, which a pipe that polls writable
    /// takes without blocking.
    static let pipeChunkBytes = 4096
    /// The most one `write` hands to a stream socket: a local one polls writable only with
    /// three quarters of its send buffer free (208 KiB by default), so this much fits.
    static let socketChunkBytes = 32 * 1024
    /// How long one wait for standard error lasts before the queue looks again whether
    /// the process is exiting.
    static let pollMilliseconds: Int32 = 100
    /// How long the last flush before exit waits for standard error to take what is held.
    static let exitFlushSeconds = 2.0

    private struct Held {
        var bytes: [UInt8] = []
        /// Lines dropped since the last notice of it.
        var dropped = 0
        /// A drain is queued or running: `append` need not queue another.
        var draining = false
        /// Set by `flush()`: when waits for standard error give up.
        var exitDeadline: Double?
    }

    private let fd: Int32
    /// The most one `write` hands over, with a `poll` before it; nil: what `fd` is open on
    /// (a file, a terminal, `/dev/null`) takes a write whole without waiting for a reader.
    private let chunkBytes: Int?
    private let droppedNotice: @Sendable (Int) -> [UInt8]
    private let held = Mutex(Held())
    private let queue = DispatchQueue(label: "hearth.log.write")
    private let timer = Mutex<DispatchSourceTimer?>(nil)

    /// - Parameter droppedNotice: the line that says how many lines were dropped, in the
    ///   log's format.
    init(fd: Int32 = STDERR_FILENO, droppedNotice: @escaping @Sendable (Int) -> [UInt8]) {
        self.fd = fd
        switch Syscall.fileType(fd) {
        case S_IFIFO: chunkBytes = Self.pipeChunkBytes
        case S_IFREG, S_IFCHR: chunkBytes = nil
        default: chunkBytes = Self.socketChunkBytes
        }
        self.droppedNotice = droppedNotice
        timer.withLock { timer in
            let source = DispatchSource.makeTimerSource(queue: queue)
            let nanos = Int(Self.flushInterval * 1e9)
            source.schedule(deadline: .now() + .nanoseconds(nanos), repeating: .nanoseconds(nanos), leeway: .nanoseconds(nanos / 5))
            source.setEventHandler { [weak self] in self?.drain() }
            source.activate()
            timer = source
        }
    }

    func append(_ line: [UInt8], urgent: Bool) {
        let start: Bool = held.withLock { held in
            guard held.bytes.count + line.count <= Self.maxHeldBytes else {
                held.dropped += 1
                return false
            }
            held.bytes.append(contentsOf: line)
            guard urgent || held.bytes.count >= Self.flushBytes, !held.draining else { return false }
            held.draining = true
            return true
        }
        if start { queue.async { self.drain() } }
    }

    /// Writes what is held, waiting at most `exitFlushSeconds` for standard error to take
    /// it (call it before exiting).
    func flush() {
        held.withLock { $0.exitDeadline = Syscall.monotonicSeconds() + Self.exitFlushSeconds }
        queue.sync { drain() }
    }

    /// On `queue`: writes what is held until nothing is, or until the exit deadline passes.
    private func drain() {
        while true {
            let batch: [UInt8] = held.withLock { held in
                var batch: [UInt8] = []
                if held.dropped > 0 {
                    batch = droppedNotice(held.dropped)
                    held.dropped = 0
                }
                batch.append(contentsOf: held.bytes)
                held.bytes.removeAll(keepingCapacity: true)
                if batch.isEmpty { held.draining = false }
                return batch
            }
            if batch.isEmpty { return }
            if !write(batch) { return }
        }
    }

    /// Writes `bytes` a chunk at a time, each once standard error polls writable. False
    /// when the exit deadline passed first (what is left is dropped).
    private func write(_ bytes: [UInt8]) -> Bool {
        guard let chunkBytes else {
            bytes.withUnsafeBytes { _ = Syscall.writeBestEffort(fd, $0) }
            return true
        }
        var offset = 0
        while offset < bytes.count {
            // A failed poll counts as ready: the write then says what is wrong.
            guard (try? Syscall.waitWritable(fd, timeoutMilliseconds: Self.pollMilliseconds)) ?? true else {
                if let exitDeadline = held.withLock({ $0.exitDeadline }), Syscall.monotonicSeconds() >= exitDeadline {
                    held.withLock { $0.draining = false }
                    return false
                }
                continue
            }
            let end = min(bytes.count, offset + chunkBytes)
            let written = bytes.withUnsafeBytes { Syscall.writeSomeBestEffort(fd, UnsafeRawBufferPointer(rebasing: $0[offset..<end])) }
            // A failure (a closed pipe, a full disk) drops the rest of this batch.
            guard let written else { return true }
            offset += written
        }
        return true
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
