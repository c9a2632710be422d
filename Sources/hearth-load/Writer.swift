#if canImport(Glibc)
import Glibc
#endif
import HearthSystem

/// One write's record, as harness.py's writer keeps it: (seq, scheduled, ack, status, sent).
struct WriteRecord: Sendable {
    var scheduled = 0.0
    var ack = 0.0
    /// HTTP status; −1 when the request failed (connection lost, timeout).
    var status = 0
    var sent = 0.0
}

/// The SSE scenario's REST writer, open loop: write `seq` is due at t0 + seq / rate and goes
/// out on the first free keep-alive connection of the pool (queued FIFO when all are busy);
/// latency counts from the scheduled time, so a slow server cannot hide queueing.
///
/// `@unchecked Sendable`: all state is touched only by the thread running `run()`; the main
/// thread reads `records` and `failSamples` after `Syscall.joinThread`.
final class WriterThread: @unchecked Sendable {
    private struct Connection {
        var fd: Int32 = -1
        /// A non-blocking connect still under way: no write goes on it yet.
        var connecting = false
        /// The write in flight on it, or −1.
        var seq = -1
        var response: [UInt8] = []
        var head: ResponseHead?
        var chunked: ChunkedDecoder?
        var bodyBytes = 0
    }

    private let options: Options
    private let marker: String
    private let method: String
    private let path: String
    private let count: Int
    private(set) var records: [WriteRecord]
    private(set) var failSamples: [String] = []
    private var connections: [Connection]
    private var queue: [Int] = []
    private var queueHead = 0
    private var finished = 0

    init(options: Options, marker: String, pid: Int32) {
        self.options = options
        self.marker = marker
        count = options.writeCount
        records = Array(repeating: WriteRecord(), count: count)
        connections = Array(repeating: Connection(), count: options.writerConnections)
        // Own paths: the first connection's path gets PUTs (a favourite at that key);
        // one location: POSTs add favourites under it (targets/hearth.json's sse.write).
        if options.ownPaths {
            method = "PUT"
            path = Requests.path(options.pathTemplate, uid: options.uid, name: "c\(pid)-0")
        } else {
            method = "POST"
            path = Requests.path(options.pathTemplate, uid: options.uid, name: "")
        }
    }

    func run() {
        guard count > 0 else { return }
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 64 * 1024, alignment: 16)
        defer { buffer.deallocate() }
        let poll: EventPoll
        do {
            poll = try EventPoll(capacity: connections.count)
        } catch {
            failSamples.append("epoll: \(error)")
            return
        }
        let start = Syscall.monotonicSeconds() + 0.2
        for seq in 0..<count { records[seq].scheduled = start + Double(seq) / options.rate }
        // harness.py's bound on the whole writer: the last write's time, then a timeout per
        // round of the pool, then 30 s.
        let deadline = start + options.duration + options.writeTimeout * Double(1 + count / connections.count) + 30
        var due = 0
        while finished < count {
            var now = Syscall.monotonicSeconds()
            if now > deadline {
                failSamples.append("writer deadline passed with \(count - finished) writes unanswered")
                for seq in 0..<count where records[seq].status == 0 { records[seq].status = -1 }
                break
            }
            while due < count && records[due].scheduled <= now {
                queue.append(due)
                due += 1
            }
            dispatch(now: now, poll)
            var timeout = Limits.pollMilliseconds
            if due < count {
                timeout = Int32(clamping: max(0, Int(((records[due].scheduled - now) * 1000).rounded(.up))))
                timeout = min(timeout, Limits.pollMilliseconds)
            }
            let ready: Int
            do {
                ready = try poll.wait(timeoutMilliseconds: timeout)
            } catch {
                failSamples.append("epoll_wait: \(error)")
                return
            }
            for event in 0..<ready {
                let index = Int(poll.event(at: event).token)
                guard connections[index].fd >= 0 else { continue }
                if connections[index].connecting { established(index, poll) } else { read(index, buffer, poll) }
            }
            now = Syscall.monotonicSeconds()
            expire(now: now, poll)
        }
        for connection in connections where connection.fd >= 0 { try? Syscall.close(connection.fd) }
    }

    /// Queued writes go out on idle open connections; when none is idle, connections are
    /// opened for the writes still waiting (lazily, as harness.py's pool: a connection the
    /// server has accepted but that never sends a request gets 408 after its header timeout).
    private func dispatch(now: Double, _ poll: EventPoll) {
        var opening = connections.reduce(0) { $0 + ($1.connecting ? 1 : 0) }
        for index in connections.indices where queueHead < queue.count {
            if connections[index].seq < 0 && connections[index].fd >= 0 && !connections[index].connecting {
                let seq = queue[queueHead]
                queueHead += 1
                send(seq, on: index, poll)
            }
        }
        for index in connections.indices where connections[index].fd < 0 && queue.count - queueHead > opening {
            reconnect(index, poll)
            if connections[index].fd >= 0 {
                if connections[index].connecting {
                    opening += 1
                } else if queueHead < queue.count {
                    let seq = queue[queueHead]
                    queueHead += 1
                    send(seq, on: index, poll)
                }
            }
        }
        if queueHead > 4_096 && queueHead * 2 > queue.count {
            queue.removeFirst(queueHead)
            queueHead = 0
        }
    }

    private func send(_ seq: Int, on index: Int, _ poll: EventPoll) {
        let body = Requests.favourite(seq: seq, marker: "\(marker)\(seq).", uid: options.uid,
                                      nowMilliseconds: Syscall.wallClockMilliseconds())
        let request = Requests.write(method: method, host: options.host, port: options.port, path: path, token: options.token, body: body)
        connections[index].seq = seq
        records[seq].sent = Syscall.monotonicSeconds()
        do {
            if try !Net.sendAll(connections[index].fd, request) { fault(index, "request did not fit the socket buffer", poll) }
        } catch {
            fault(index, "\(error)", poll)
        }
    }

    private func read(_ index: Int, _ buffer: UnsafeMutableRawBufferPointer, _ poll: EventPoll) {
        while connections[index].fd >= 0 {
            let result: IOResult<Int>
            do {
                result = try Syscall.receive(connections[index].fd, into: buffer)
            } catch {
                return fault(index, "\(error)", poll)
            }
            guard case .done(let got) = result else { return }
            guard connections[index].seq >= 0 else {
                // An idle keep-alive connection the server closed (or answered 408 and
                // closed): not a write's failure; a new one is opened when needed.
                try? Syscall.close(connections[index].fd)
                connections[index] = Connection()
                return
            }
            guard got > 0 else { return fault(index, "connection closed by the server", poll) }
            response(index, UnsafeRawBufferPointer(rebasing: buffer[0..<got]), poll)
            if got < buffer.count { return }
        }
    }

    /// Collects one response; when it is whole, the write is acknowledged.
    private func response(_ index: Int, _ bytes: UnsafeRawBufferPointer, _ poll: EventPoll) {
        var body = bytes
        if connections[index].head == nil {
            connections[index].response.append(contentsOf: bytes)
            do {
                let parsed = try connections[index].response.withUnsafeBytes { raw in
                    Result { () throws(LoadError) in try ResponseHead.parse(raw) }
                }.get()
                guard let head = parsed else { return }
                connections[index].head = head
                if head.chunked { connections[index].chunked = ChunkedDecoder() }
                guard head.contentLength != nil || head.chunked else { return fault(index, "response without a length", poll) }
            } catch {
                return fault(index, "\(error)", poll)
            }
            let head = connections[index].head!
            let rest = Array(connections[index].response[head.length...])
            connections[index].response = []
            return rest.withUnsafeBytes { responseBody(index, $0, poll) }
        }
        body = bytes
        responseBody(index, body, poll)
    }

    private func responseBody(_ index: Int, _ bytes: UnsafeRawBufferPointer, _ poll: EventPoll) {
        guard let head = connections[index].head else { return }
        var done = false
        if var decoder = connections[index].chunked {
            do {
                try decoder.feed(bytes) { _ in }
            } catch {
                return fault(index, "\(error)", poll)
            }
            connections[index].chunked = decoder
            done = decoder.finished
        } else {
            connections[index].bodyBytes += bytes.count
            done = connections[index].bodyBytes >= head.contentLength ?? 0
        }
        guard done else { return }
        let seq = connections[index].seq
        records[seq].ack = Syscall.monotonicSeconds()
        records[seq].status = head.status
        finished += 1
        connections[index] = Connection(fd: connections[index].fd)
    }

    private func expire(now: Double, _ poll: EventPoll) {
        for index in connections.indices where connections[index].seq >= 0 {
            if now - records[connections[index].seq].sent > options.writeTimeout { fault(index, "write timeout", poll) }
        }
    }

    private func established(_ index: Int, _ poll: EventPoll) {
        let fd = connections[index].fd
        do {
            let code = try Syscall.socketError(fd)
            guard code == 0 else { return fault(index, "writer connect \(SystemError(errno: code, call: "connect"))", poll) }
            connections[index].connecting = false
            try poll.modify(fd, events: EventPoll.readable | EventPoll.peerClosed, token: UInt64(index))
        } catch {
            fault(index, "\(error)", poll)
        }
    }

    /// The write in flight fails (status −1, as harness.py) and the connection is closed
    /// (`dispatch` opens another when a write waits).
    private func fault(_ index: Int, _ message: String, _ poll: EventPoll) {
        if failSamples.count < 5 { failSamples.append(message) }
        let seq = connections[index].seq
        if seq >= 0 {
            records[seq].ack = Syscall.monotonicSeconds()
            records[seq].status = -1
            finished += 1
        }
        if connections[index].fd >= 0 { try? Syscall.close(connections[index].fd) }
        connections[index] = Connection()
    }

    /// A non-blocking connect; one still in progress is finished by `established` when the
    /// socket turns writable.
    private func reconnect(_ index: Int, _ poll: EventPoll) {
        do {
            let (fd, connected) = try Net.connect(port: options.port, source: 1)
            connections[index].fd = fd
            connections[index].connecting = !connected
            let interest = connected ? EventPoll.readable | EventPoll.peerClosed : EventPoll.writable
            try poll.add(fd, events: interest, token: UInt64(index))
        } catch {
            if failSamples.count < 5 { failSamples.append("writer connect \(error)") }
        }
    }
}
