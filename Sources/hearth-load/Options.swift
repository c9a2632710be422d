import HearthSystem

/// Every limit of the load generator, named (house rule): arguments beyond them are refused
/// with a message, never a crash.
enum Limits {
    static let maxSubscribers = 1_000_000
    static let maxThreads = 64
    /// Loopback source addresses 127.0.0.1 … 127.0.0.<n>: each has its own ephemeral port range.
    static let maxSourceAddresses = 250
    static let maxRate = 100_000.0
    static let maxDurationSeconds = 3_600.0
    static let maxWaitSeconds = 3_600.0
    static let maxWriterConnections = 1_024
    static let maxOpenConcurrency = 100_000
    /// Events kept in memory (12 bytes each): subscribers × writes must fit.
    static let maxRecordedEvents = 200_000_000
    /// Bytes read per recv: one buffer per thread.
    static let receiveBufferBytes = 256 * 1024
    /// A message (WebSocket frames of one message, an SSE event) held while incomplete.
    static let maxMessageBytes = 16 * 1024 * 1024
    static let maxResponseHeadBytes = 64 * 1024
    static let maxMarkerDigits = 12
    static let maxChunkSizeDigits = 12
    static let maxStatusBytes = 64
    static let maxEventNameScan = 256
    /// epoll events taken per wait.
    static let epollBatch = 1_024
    /// How often an idle thread looks at its stop flag and deadlines.
    static let pollMilliseconds: Int32 = 50
    static let maxArgumentBytes = 64 * 1024
    static let procFileBytes = 64 * 1024
}

/// What went wrong, said plainly.
enum LoadError: Error, CustomStringConvertible, Equatable {
    case usage(String)
    case protocolViolation(String)
    case system(SystemError)
    case failed(String)

    var description: String {
        switch self {
        case .usage(let text): return text
        case .protocolViolation(let text): return "protocol violation: \(text)"
        case .system(let error): return error.description
        case .failed(let text): return text
        }
    }
}

enum Transport: String, Sendable {
    case wire, sse
}

/// The command line of `hearth-load fanout` (the only mode; `--paths own` and `--rate 0`
/// make it the idle-memory run).
struct Options: Sendable {
    var transport = Transport.wire
    var host = "127.0.0.1"
    var port = 0
    var uid = ""
    var token = ""
    var namespace = "bench"
    var subscribers = 0
    /// `${uid}` and `${i}` (the connection's name, c<pid>-<index>) are replaced.
    var pathTemplate = "/users/${uid}/favorites"
    var ownPaths = false
    var stage = "listen"
    var rate = 0.0
    var duration = 10.0
    var threads = 2
    var sources = 4
    var openConcurrency = 200
    var readyTimeout = 120.0
    var settle = 2.0
    var drain = 120.0
    var stall = 5.0
    var writerConnections = 16
    var writeTimeout = 120.0
    var serverPID: Int32 = 0
    var run = 1
    var label = ""
    var out: String?
    var quietPercent = 10.0
    var quietWait = 300.0

    static let usage = """
    usage: hearth-load fanout --transport wire|sse --port PORT --uid UID --token TOKEN --subscribers N
             [--host 127.0.0.1] [--ns bench] [--path TEMPLATE] [--paths one|own] [--stage handshake|auth|listen]
             [--rate WRITES_PER_S] [--duration S] [--threads 2] [--sources 4] [--open-conc 200]
             [--ready-timeout 120] [--settle 2] [--drain 120] [--stall 5] [--writer-conns 16] [--write-timeout 120]
             [--server-pid PID] [--run 1] [--label NAME] [--out FILE] [--quiet 10] [--quiet-wait 300]
    The SSE fan-out of scripts/bench/harness.py (sse_once), with wire or SSE subscribers, in one
    process: T epoll threads own the connections, one thread writes. One JSON line on stdout
    (and appended to --out). --paths own: each connection listens on its own path and the
    writer PUTs to the first connection's path. TOKEN may be given as @FILE.
    hearth-load floor [--port 0] [--threads CPUS]: the floor of a push, a server for this
    client that only sends each push (scripts/bench/push_floor.sh).
    """

    static func parse(_ arguments: [String]) throws(LoadError) -> Options {
        var options = Options()
        var index = 0
        guard arguments.first == "fanout" else { throw .usage(usage) }
        index = 1
        var seenPort = false, seenSubscribers = false
        func value(_ name: String) throws(LoadError) -> String {
            index += 1
            guard index < arguments.count else { throw .usage("\(name) needs a value") }
            guard arguments[index].utf8.count <= Limits.maxArgumentBytes else { throw .usage("\(name): value too long") }
            return arguments[index]
        }
        func number(_ name: String, _ range: ClosedRange<Double>) throws(LoadError) -> Double {
            let text = try value(name)
            guard let parsed = Double(text), parsed.isFinite, range.contains(parsed) else {
                throw .usage("\(name) must be a number in \(range.lowerBound)...\(range.upperBound), not \(text)")
            }
            return parsed
        }
        func integer(_ name: String, _ range: ClosedRange<Int>) throws(LoadError) -> Int {
            let text = try value(name)
            guard let parsed = Int(text), range.contains(parsed) else {
                throw .usage("\(name) must be an integer in \(range.lowerBound)...\(range.upperBound), not \(text)")
            }
            return parsed
        }
        while index < arguments.count {
            let name = arguments[index]
            switch name {
            case "--transport":
                let text = try value(name)
                guard let transport = Transport(rawValue: text) else { throw .usage("--transport must be wire or sse, not \(text)") }
                options.transport = transport
            case "--host":
                options.host = try value(name)
                guard options.host == "127.0.0.1" else { throw .usage("--host: only 127.0.0.1 (loopback) is supported") }
            case "--port": options.port = try integer(name, 1...65535); seenPort = true
            case "--uid": options.uid = try value(name)
            case "--token": options.token = try value(name)
            case "--ns": options.namespace = try value(name)
            case "--subscribers": options.subscribers = try integer(name, 1...Limits.maxSubscribers); seenSubscribers = true
            case "--path": options.pathTemplate = try value(name)
            case "--paths":
                let text = try value(name)
                guard text == "one" || text == "own" else { throw .usage("--paths must be one or own, not \(text)") }
                options.ownPaths = text == "own"
            case "--stage":
                let text = try value(name)
                guard ["handshake", "auth", "listen"].contains(text) else { throw .usage("--stage must be handshake, auth or listen") }
                options.stage = text
            case "--rate": options.rate = try number(name, 0...Limits.maxRate)
            case "--duration": options.duration = try number(name, 0...Limits.maxDurationSeconds)
            case "--threads": options.threads = try integer(name, 1...Limits.maxThreads)
            case "--sources": options.sources = try integer(name, 1...Limits.maxSourceAddresses)
            case "--open-conc": options.openConcurrency = try integer(name, 1...Limits.maxOpenConcurrency)
            case "--ready-timeout": options.readyTimeout = try number(name, 0.1...Limits.maxWaitSeconds)
            case "--settle": options.settle = try number(name, 0...Limits.maxWaitSeconds)
            case "--drain": options.drain = try number(name, 0...Limits.maxWaitSeconds)
            case "--stall": options.stall = try number(name, 0.1...Limits.maxWaitSeconds)
            case "--writer-conns": options.writerConnections = try integer(name, 1...Limits.maxWriterConnections)
            case "--write-timeout": options.writeTimeout = try number(name, 0.1...Limits.maxWaitSeconds)
            case "--server-pid": options.serverPID = Int32(try integer(name, 1...Int(Int32.max)))
            case "--run": options.run = try integer(name, 0...1_000_000)
            case "--label": options.label = try value(name)
            case "--out": options.out = try value(name)
            case "--quiet": options.quietPercent = try number(name, 0...10_000)
            case "--quiet-wait": options.quietWait = try number(name, 0...Limits.maxWaitSeconds)
            case "-h", "--help": throw .usage(usage)
            default: throw .usage("unknown argument \(name)\n\(usage)")
            }
            index += 1
        }
        guard seenPort else { throw .usage("--port is required") }
        guard seenSubscribers else { throw .usage("--subscribers is required") }
        guard !options.uid.isEmpty, options.uid.utf8.allSatisfy(Self.isPathSafe) else {
            throw .usage("--uid is required (letters, digits, - and _)")
        }
        if options.token.hasPrefix("@") {
            do {
                let bytes = try Syscall.readFile(String(options.token.dropFirst()), limit: Limits.maxArgumentBytes)
                options.token = String(decoding: bytes, as: UTF8.self).trimmingCharactersNewline()
            } catch {
                throw .usage("--token \(options.token): \(error)")
            }
        }
        guard !options.token.isEmpty, options.token.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F && $0 != UInt8(ascii: "\"") }) else {
            throw .usage("--token is required (an ID token: printable ASCII, no quotes or spaces)")
        }
        guard options.namespace.utf8.allSatisfy(Self.isPathSafe) else { throw .usage("--ns: letters, digits, - and _ only") }
        guard options.pathTemplate.hasPrefix("/"), options.pathTemplate.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F && $0 != UInt8(ascii: "\"") }) else {
            throw .usage("--path must start with / and hold printable ASCII without quotes")
        }
        if options.ownPaths != options.pathTemplate.contains("${i}") {
            throw .usage("--paths own needs ${i} in --path (and --paths one must not have it)")
        }
        if options.transport == .sse && options.stage != "listen" { throw .usage("--stage applies to --transport wire only") }
        let writes = Int((options.rate * options.duration).rounded(.toNearestOrEven))
        let listeners = options.ownPaths ? 1 : options.subscribers
        guard listeners.multipliedReportingOverflow(by: writes + 1).partialValue <= Limits.maxRecordedEvents else {
            throw .usage("subscribers × writes over \(Limits.maxRecordedEvents) events: lower --subscribers, --rate or --duration")
        }
        if options.label.isEmpty { options.label = options.transport == .wire ? "hearth-wire" : "hearth" }
        return options
    }

    /// The number of writes: round(rate × duration), as harness.py.
    var writeCount: Int { Int((rate * duration).rounded(.toNearestOrEven)) }

    private static func isPathSafe(_ byte: UInt8) -> Bool {
        (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
            || byte == UInt8(ascii: "-") || byte == UInt8(ascii: "_")
    }
}

extension String {
    /// Without trailing CR, LF and spaces (a token file's last line end).
    func trimmingCharactersNewline() -> String {
        var bytes = Array(utf8)
        while let last = bytes.last, last == 0x0A || last == 0x0D || last == 0x20 { bytes.removeLast() }
        return String(decoding: bytes, as: UTF8.self)
    }
}
