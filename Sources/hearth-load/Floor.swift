#if canImport(Glibc)
import Glibc
#endif
import HearthSystem
import Synchronization

/// The command line of `hearth-load floor`.
struct FloorOptions: Sendable {
    var port = 0
    var threads = max(1, Int(sysconf(Int32(_SC_NPROCESSORS_ONLN))))
    /// Connections held at once, setting up or live; `runFloor` lowers it under the
    /// open-file limit, so `accept` never fails for want of a descriptor.
    var maxConnections = FloorLimits.maxConnections

    static let usage = """
    usage: hearth-load floor [--port 0] [--threads CPUS] [--max-connections N]
    The floor of a push: a server that does nothing per push but the kernel's send of the
    push's bytes to each listening connection, for `hearth-load fanout` (wire or SSE, one
    location) to measure beside Hearth. It answers the upgrade, the wire handshake, auth and
    listen, and event-stream requests, without checking tokens; each POST <location>.json
    is answered with a name, then its push (Hearth's envelope and length) goes out on every
    live connection from THREADS sender threads, each sending to its share with one send()
    per connection from one buffer. Past N connections held (at most the open-file limit)
    a new one is closed at once. Listens on 127.0.0.1 and prints "port N" on stdout.
    """

    static func parse(_ arguments: [String]) throws(LoadError) -> FloorOptions {
        var options = FloorOptions()
        guard arguments.first == "floor" else { throw .usage(usage) }
        var index = 1
        while index < arguments.count {
            let name = arguments[index]
            guard index + 1 < arguments.count else { throw .usage("\(name) needs a value\n\(usage)") }
            let text = arguments[index + 1]
            switch name {
            case "--port":
                guard let port = Int(text), (0...65_535).contains(port) else { throw .usage("--port must be 0...65535, not \(text)") }
                options.port = port
            case "--threads":
                guard let threads = Int(text), (1...FloorLimits.maxThreads).contains(threads) else {
                    throw .usage("--threads must be 1...\(FloorLimits.maxThreads), not \(text)")
                }
                options.threads = threads
            case "--max-connections":
                guard let count = Int(text), (1...FloorLimits.maxConnections).contains(count) else {
                    throw .usage("--max-connections must be 1...\(FloorLimits.maxConnections), not \(text)")
                }
                options.maxConnections = count
            default:
                throw .usage("unknown option \(name)\n\(usage)")
            }
            index += 2
        }
        return options
    }
}

/// One sender thread: the live connections handed to it, and the pushes to send them.
/// Everything but `inbox`, `waker` and `stop` is touched only by the thread in `run()`.
final class FloorSender: Sendable {
    struct Inbox {
        var wire: [Int32] = []
        var streams: [Int32] = []
        /// (wire frame, SSE event) of each push not sent yet.
        var pushes: [(wire: [UInt8], sse: [UInt8])] = []
        var droppedPushes = 0
    }

    let inbox = Mutex(Inbox())
    let waker: EventWaker
    let stop = Atomic<Bool>(false)
    private let control: FloorControl

    init(control: FloorControl) throws(SystemError) {
        waker = try EventWaker()
        self.control = control
    }

    /// Queues a push (from the main thread) and wakes the sender.
    func push(wire: [UInt8], sse: [UInt8]) {
        inbox.withLock { box in
            if box.pushes.count < FloorLimits.maxQueuedPushes { box.pushes.append((wire, sse)) } else { box.droppedPushes += 1 }
        }
        waker.signal()
    }

    func adopt(_ fd: Int32, wire: Bool) {
        inbox.withLock { box in if wire { box.wire.append(fd) } else { box.streams.append(fd) } }
    }

    func run() {
        var wire: [Int32] = [], streams: [Int32] = []
        while !stop.load(ordering: .relaxed) {
            _ = try? Syscall.waitReadable(waker.descriptor, timeoutMilliseconds: FloorLimits.pollMilliseconds)
            waker.drain()
            let taken = inbox.withLock { box in
                defer { box = Inbox() }
                return box
            }
            wire += taken.wire
            streams += taken.streams
            for push in taken.pushes {
                send(push.wire, to: &wire)
                send(push.sse, to: &streams)
            }
        }
        for fd in wire + streams { try? Syscall.close(fd) }
    }

    /// One `send` per connection from the one buffer; a connection that does not take the
    /// whole push (its buffer is full, or it is gone) is closed and dropped, so no stream
    /// ever carries half a message. Nothing is allocated per connection.
    private func send(_ bytes: [UInt8], to descriptors: inout [Int32]) {
        var kept = 0
        bytes.withUnsafeBytes { raw in
            for index in descriptors.indices {
                let fd = descriptors[index]
                if case .done(let count)? = try? Syscall.send(fd, raw), count == raw.count {
                    descriptors[kept] = fd
                    kept += 1
                } else {
                    try? Syscall.close(fd)
                    control.held.subtract(1, ordering: .relaxed)
                }
            }
        }
        descriptors.removeLast(descriptors.count - kept)
    }
}

/// Stops a running `FloorServer` from another thread, and counts the connections it holds
/// (the main thread's and the senders').
final class FloorControl: Sendable {
    let stop = Atomic<Bool>(false)
    let held = Atomic<Int>(0)
    let waker: EventWaker

    init() throws(SystemError) { waker = try EventWaker() }

    func requestStop() {
        stop.store(true, ordering: .releasing)
        waker.signal()
    }
}

/// The floor server's main thread: accepts, reads request heads, answers the set-up of
/// each connection, and hands live ones to the senders; a write's push goes to every sender.
final class FloorServer {
    private enum Phase {
        case head
        /// A wire session between its upgrade and its listen.
        case wire
        case body(location: String, length: Int)
    }

    private struct Connection {
        var phase = Phase.head
        var input: [UInt8] = []
    }

    private let options: FloorOptions
    private let control: FloorControl
    private let listener: Int32
    private let poll: EventPoll
    private var connections: [Int32: Connection] = [:]
    private var senders: [FloorSender] = []
    private var nextSender = 0
    private var writes = 0
    private static let headEnd = Array("\r\n\r\n".utf8)
    private static let listenAction = Array(#""a":"q""#.utf8)

    init(options: FloorOptions, control: FloorControl) throws(SystemError) {
        self.options = options
        self.control = control
        poll = try EventPoll(capacity: 1_024)
        try poll.add(control.waker.descriptor, events: EventPoll.readable, token: UInt64(UInt32(bitPattern: control.waker.descriptor)))
        let fd = try Syscall.socket(family: AF_INET)
        do {
            try Syscall.setOption(fd, level: SOL_SOCKET, name: SO_REUSEADDR, value: 1)
            var (address, length) = Net.loopback(1, port: options.port)
            try Syscall.bind(fd, &address, length)
            try Syscall.listen(fd, backlog: FloorLimits.listenBacklog)
            try poll.add(fd, events: EventPoll.readable, token: UInt64(UInt32(bitPattern: fd)))
        } catch {
            try? Syscall.close(fd)
            throw error
        }
        listener = fd
    }

    /// The port the server listens on.
    func port() throws(SystemError) -> Int {
        let storage = try Syscall.localAddress(listener)
        return withUnsafePointer(to: storage) {
            $0.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { Int(UInt16(bigEndian: $0.pointee.sin_port)) }
        }
    }

    /// Runs until `control` says stop (the benchmark script ends the process instead); then
    /// stops the senders and closes every connection and the listener.
    func run() throws(LoadError) {
        var handles: [pthread_t] = []
        defer {
            for sender in senders { sender.stop.store(true, ordering: .relaxed); sender.waker.signal() }
            for handle in handles { Syscall.joinThread(handle) }
            for fd in connections.keys { try? Syscall.close(fd) }
            connections = [:]
            try? Syscall.close(listener)
        }
        for _ in 0..<options.threads {
            let sender: FloorSender
            do { sender = try FloorSender(control: control) } catch { throw .system(error) }
            senders.append(sender)
            do { handles.append(try Syscall.spawnThread { sender.run() }) } catch { throw .system(error) }
        }
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: Limits.receiveBufferBytes, alignment: 16)
        defer { buffer.deallocate() }
        while !control.stop.load(ordering: .acquiring) {
            let count: Int
            do { count = try poll.wait(timeoutMilliseconds: -1) } catch { throw .system(error) }
            for index in 0..<count {
                let fd = Int32(bitPattern: UInt32(truncatingIfNeeded: poll.event(at: index).token))
                if fd == listener {
                    acceptAll()
                } else if fd == control.waker.descriptor {
                    control.waker.drain()
                } else {
                    readAll(fd, buffer)
                }
            }
        }
    }

    private func acceptAll() {
        while true {
            var peer = sockaddr_storage()
            guard case .done(let fd)? = try? Syscall.accept(listener, peer: &peer) else { return }
            guard control.held.load(ordering: .relaxed) < options.maxConnections,
                  (try? poll.add(fd, events: EventPoll.readable, token: UInt64(UInt32(bitPattern: fd)))) != nil else {
                try? Syscall.close(fd)
                continue
            }
            control.held.add(1, ordering: .relaxed)
            try? Syscall.setOption(fd, level: Int32(IPPROTO_TCP), name: TCP_NODELAY, value: 1)
            connections[fd] = Connection()
        }
    }

    private func readAll(_ fd: Int32, _ buffer: UnsafeMutableRawBufferPointer) {
        while connections[fd] != nil {
            guard case .done(let count)? = try? Syscall.receive(fd, into: buffer) else {
                // would block, or an error: an error shows again as end of stream next time
                return
            }
            guard count > 0 else { return close(fd) }
            connections[fd]!.input.append(contentsOf: UnsafeRawBufferPointer(rebasing: buffer[0..<count]))
            handle(fd)
        }
    }

    /// Acts on every whole request or frame in the connection's input.
    private func handle(_ fd: Int32) {
        while let connection = connections[fd] {
            switch connection.phase {
            case .head:
                let found = connection.input.withUnsafeBytes { MarkerScanner.find(Self.headEnd, in: $0) }
                guard let end = found else {
                    if connection.input.count > FloorLimits.maxHeadBytes { refuse(fd, 431, "request head over \(FloorLimits.maxHeadBytes) bytes") }
                    return
                }
                guard end <= FloorLimits.maxHeadBytes else { return refuse(fd, 431, "request head over \(FloorLimits.maxHeadBytes) bytes") }
                let head = Array(connection.input[..<end])
                connections[fd]!.input.removeFirst(end + Self.headEnd.count)
                switch FloorRequest.classify(head) {
                case .webSocket:
                    guard reply(fd, FloorMessages.upgraded) else { return }
                    connections[fd]!.phase = .wire
                case .stream:
                    guard reply(fd, FloorMessages.streamOpened) else { return }
                    return handOver(fd, wire: false)
                case .write(let location, let length):
                    connections[fd]!.phase = .body(location: location, length: length)
                case .refused(let status, let message):
                    return refuse(fd, status, message)
                }
            case .body(let location, let length):
                guard connection.input.count >= length else { return }
                let body = Array(connection.input[..<length])
                connections[fd]!.input.removeFirst(length)
                connections[fd]!.phase = .head
                write(fd, location: location, body: body)
            case .wire:
                switch ClientFrame.parse(connection.input[...]) {
                case .incomplete:
                    return
                case .invalid:
                    return close(fd)
                case .frame(let opcode, let payload, let length):
                    connections[fd]!.input.removeFirst(length)
                    guard opcode == FrameHead.text else { return close(fd) }
                    guard let number = FloorMessages.requestNumber(payload) else { return close(fd) }
                    let listen = payload.withUnsafeBytes { MarkerScanner.find(Self.listenAction, in: $0) } != nil
                    guard reply(fd, FloorMessages.answer(number, listen: listen)) else { return }
                    if listen { return handOver(fd, wire: true) }
                }
            }
        }
    }

    private func write(_ fd: Int32, location: String, body: [UInt8]) {
        writes += 1
        let name = FloorMessages.name(writes)
        guard reply(fd, FloorMessages.written(name: name)) else { return }
        let wire = FloorMessages.wirePush(location: location, name: name, body: body)
        let sse = FloorMessages.ssePush(id: writes, name: name, body: body)
        for sender in senders { sender.push(wire: wire, sse: sse) }
    }

    /// A live listener leaves the main thread's poll for a sender, which alone writes to
    /// it and closes it from then on.
    private func handOver(_ fd: Int32, wire: Bool) {
        try? poll.remove(fd)
        connections[fd] = nil
        senders[nextSender].adopt(fd, wire: wire)
        nextSender = (nextSender + 1) % senders.count
    }

    /// Sends a set-up answer; false (and the connection closed) when it did not go whole.
    private func reply(_ fd: Int32, _ bytes: [UInt8]) -> Bool {
        if (try? Net.sendAll(fd, bytes)) == true { return true }
        close(fd)
        return false
    }

    private func refuse(_ fd: Int32, _ status: Int, _ message: String) {
        _ = reply(fd, FloorMessages.refusal(status: status, message: message))
        close(fd)
    }

    private func close(_ fd: Int32) {
        guard connections.removeValue(forKey: fd) != nil else { return }
        try? poll.remove(fd)
        try? Syscall.close(fd)
        control.held.subtract(1, ordering: .relaxed)
    }
}

func runFloor(_ arguments: [String]) -> Int32 {
    do {
        var options = try FloorOptions.parse(arguments)
        Syscall.ignoreSIGPIPE()
        let limit = (try? Syscall.raiseOpenFileLimit()) ?? 1_024
        // The listener, epoll, the wakers and stdio stay within the margin.
        options.maxConnections = min(options.maxConnections, max(1, limit - 64 - 2 * options.threads))
        let server: FloorServer
        do { server = try FloorServer(options: options, control: try FloorControl()) } catch { throw LoadError.system(error) }
        let port: Int
        do { port = try server.port() } catch { throw LoadError.system(error) }
        try? Syscall.writeAll(1, Array("port \(port)\n".utf8))
        try server.run()
        return 0
    } catch {
        printError("hearth-load floor: \(error)")
        if case LoadError.usage = error { return 2 }
        return 1
    }
}
