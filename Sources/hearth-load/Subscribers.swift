#if canImport(Glibc)
import Glibc
#endif
import HearthSystem
import Synchronization

/// What every subscriber thread shares (read-only).
struct SubscriberSetup: Sendable {
    let options: Options
    let pid: Int32
    /// The writes' marker prefix ("bm<8 chars>-").
    let prefix: [UInt8]
    /// Events to keep room for per connection (the writes; one per write per connection).
    let eventsPerConnection: Int
}

/// Counters and flags the main thread reads or sets while a subscriber thread runs.
final class SubscriberCounters: Sendable {
    let ready = Atomic<Int>(0)
    let failed = Atomic<Int>(0)
    let lost = Atomic<Int>(0)
    let received = Atomic<Int>(0)
    let openingDone = Atomic<Bool>(false)
    let stop = Atomic<Bool>(false)
    let cpuClock = Atomic<Int32>(-1)
    /// Connection 0 (the one whose path gets the writes with --paths own) is live.
    let firstReady = Atomic<Bool>(false)
}

/// One subscriber thread: its own epoll over a shard of the connections (global indices
/// `indices`), non-blocking sockets, reads of `Limits.receiveBufferBytes`; once a
/// connection is live, the only work per message is the marker scan and two stores into
/// preallocated arrays.
///
/// `@unchecked Sendable`: everything but `counters` is touched only by the thread running
/// `run()`, from its start (`Syscall.spawnThread`) to its end; the main thread reads the
/// results (`seqs`, `times`, `recorded`, `otherEvents`, `failSamples`) only after
/// `Syscall.joinThread`, which orders those accesses. `counters` are atomics.
final class SubscriberThread: @unchecked Sendable {
    enum Phase { case idle, connecting, head, body, closed }

    struct Slot {
        var fd: Int32 = -1
        var phase = Phase.idle
        var ready = false
        var openedAt = 0.0
        /// Bytes of an incomplete response head or frame.
        var pending: [UInt8] = []
        /// Frames of a fragmented WebSocket message.
        var fragments: [UInt8] = []
        /// SSE: the body's chunked framing, and the bytes of an incomplete event.
        var chunked: ChunkedDecoder?
        var event: [UInt8] = []
    }

    let counters = SubscriberCounters()
    let indices: Range<Int>
    private let setup: SubscriberSetup
    private let scanner: MarkerScanner
    private var slots: [Slot]
    private var next: Int
    private var inFlight = 0
    private let openLimit: Int
    private var masker: FrameMasker
    private(set) var seqs: UnsafeMutableBufferPointer<Int32>
    private(set) var times: UnsafeMutableBufferPointer<Double>
    private(set) var recorded = 0
    private(set) var overflow = 0
    private(set) var otherEvents = 0
    private(set) var failSamples: [String] = []
    private var now = 0.0

    private static let eventEnd: [UInt8] = Array("\n\n".utf8)

    init(setup: SubscriberSetup, indices: Range<Int>, openLimit: Int, seed: UInt64) {
        self.setup = setup
        self.indices = indices
        self.openLimit = max(1, openLimit)
        scanner = MarkerScanner(prefix: setup.prefix)
        slots = Array(repeating: Slot(), count: indices.count)
        next = indices.lowerBound
        masker = FrameMasker(seed: seed)
        // Only connection 0 hears the writes when every connection has its own path.
        let listeners = setup.options.ownPaths ? (indices.contains(0) ? 1 : 0) : indices.count
        let capacity = max(1, listeners * setup.eventsPerConnection + 1_024)
        seqs = .allocate(capacity: capacity)
        times = .allocate(capacity: capacity)
    }

    deinit {
        seqs.deallocate()
        times.deallocate()
    }

    /// The thread's body: open the shard, then read until told to stop; closes every socket.
    func run() {
        counters.cpuClock.store(Syscall.currentThreadCPUClock(), ordering: .releasing)
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: Limits.receiveBufferBytes, alignment: 16)
        defer { buffer.deallocate() }
        let poll: EventPoll
        do {
            poll = try EventPoll(capacity: Limits.epollBatch)
        } catch {
            sample("epoll: \(error)")
            counters.failed.add(indices.count, ordering: .relaxed)
            counters.openingDone.store(true, ordering: .releasing)
            return
        }
        now = Syscall.monotonicSeconds()
        openMore(poll)
        var nextTimeoutCheck = now + 0.5
        while !counters.stop.load(ordering: .acquiring) {
            let count: Int
            do {
                count = try poll.wait(timeoutMilliseconds: Limits.pollMilliseconds)
            } catch {
                sample("epoll_wait: \(error)")
                break
            }
            for index in 0..<count {
                let (token, events) = poll.event(at: index)
                let slot = Int(token)
                guard slot < slots.count, slots[slot].phase != .closed else { continue }
                if slots[slot].phase == .connecting {
                    if events & (EventPoll.writable | EventPoll.error | EventPoll.hangUp) != 0 { connected(slot, poll) }
                    continue
                }
                if events & (EventPoll.readable | EventPoll.hangUp | EventPoll.error | EventPoll.peerClosed) != 0 {
                    readAll(slot, buffer)
                }
            }
            if !counters.openingDone.load(ordering: .relaxed) {
                now = Syscall.monotonicSeconds()
                if now >= nextTimeoutCheck {
                    expireOpens()
                    nextTimeoutCheck = now + 0.5
                }
                openMore(poll)
            }
        }
        for slot in slots.indices where slots[slot].fd >= 0 {
            try? Syscall.close(slots[slot].fd)
            slots[slot].fd = -1
        }
    }

    // MARK: Opening

    private func openMore(_ poll: EventPoll) {
        while inFlight < openLimit && next < indices.upperBound {
            let global = next
            next += 1
            let slot = global - indices.lowerBound
            slots[slot].openedAt = now
            inFlight += 1
            do {
                let (fd, _) = try Net.connect(port: setup.options.port, source: 1 + global % setup.options.sources)
                slots[slot].fd = fd
                slots[slot].phase = .connecting
                try poll.add(fd, events: EventPoll.writable | EventPoll.readable | EventPoll.peerClosed, token: UInt64(slot))
            } catch {
                fail(slot, "\(error)")
            }
        }
        if next == indices.upperBound && inFlight == 0 && !counters.openingDone.load(ordering: .relaxed) {
            counters.openingDone.store(true, ordering: .releasing)
        }
    }

    private func expireOpens() {
        let limit = setup.options.readyTimeout
        for slot in slots.indices where !slots[slot].ready && slots[slot].phase != .closed && slots[slot].phase != .idle {
            if now - slots[slot].openedAt > limit { fail(slot, "ready timeout") }
        }
    }

    private func connected(_ slot: Int, _ poll: EventPoll) {
        let fd = slots[slot].fd
        do {
            let code = try Syscall.socketError(fd)
            guard code == 0 else { return fail(slot, "\(SystemError(errno: code, call: "connect"))") }
            try poll.modify(fd, events: EventPoll.readable | EventPoll.peerClosed, token: UInt64(slot))
            let options = setup.options
            let request: [UInt8]
            switch options.transport {
            case .wire:
                request = Requests.upgrade(host: options.host, port: options.port, namespace: options.namespace, key: masker.webSocketKey())
            case .sse:
                request = Requests.stream(host: options.host, port: options.port, path: path(for: slot), token: options.token)
            }
            slots[slot].phase = .head
            if try !Net.sendAll(fd, request) { fail(slot, "request did not fit the socket buffer") }
        } catch {
            fail(slot, "\(error)")
        }
    }

    private func path(for slot: Int) -> String {
        Requests.path(setup.options.pathTemplate, uid: setup.options.uid, name: "c\(setup.pid)-\(indices.lowerBound + slot)")
    }

    private func setReady(_ slot: Int) {
        guard !slots[slot].ready else { return }
        slots[slot].ready = true
        inFlight -= 1
        counters.ready.add(1, ordering: .relaxed)
        if indices.lowerBound + slot == 0 { counters.firstReady.store(true, ordering: .relaxed) }
    }

    /// Ends a connection that failed: before it was live it counts as failed, after as lost.
    private func fail(_ slot: Int, _ message: String) {
        guard slots[slot].phase != .closed else { return }
        if slots[slot].ready {
            counters.lost.add(1, ordering: .relaxed)
        } else {
            inFlight -= 1
            counters.failed.add(1, ordering: .relaxed)
            sample(message)
        }
        close(slot)
    }

    private func close(_ slot: Int) {
        if slots[slot].fd >= 0 { try? Syscall.close(slots[slot].fd) }
        slots[slot] = Slot(fd: -1, phase: .closed, ready: slots[slot].ready)
    }

    private func sample(_ message: String) {
        if failSamples.count < 5 { failSamples.append(message) }
    }

    private func send(_ slot: Int, _ bytes: [UInt8]) {
        do {
            if try !Net.sendAll(slots[slot].fd, bytes) { fail(slot, "a frame did not fit the socket buffer") }
        } catch {
            fail(slot, "\(error)")
        }
    }

    // MARK: Reading

    private func readAll(_ slot: Int, _ buffer: UnsafeMutableRawBufferPointer) {
        while slots[slot].phase != .closed {
            let result: IOResult<Int>
            do {
                result = try Syscall.receive(slots[slot].fd, into: buffer)
            } catch {
                return fail(slot, "\(error)")
            }
            guard case .done(let count) = result else { return }
            guard count > 0 else { return fail(slot, "closed before ready") }
            now = Syscall.monotonicSeconds()
            let bytes = UnsafeRawBufferPointer(rebasing: buffer[0..<count])
            if slots[slot].phase == .head { head(slot, bytes) } else { body(slot, bytes) }
            if count < buffer.count { return }
        }
    }

    private func head(_ slot: Int, _ bytes: UnsafeRawBufferPointer) {
        slots[slot].pending.append(contentsOf: bytes)
        let parsed: ResponseHead?
        do {
            parsed = try slots[slot].pending.withUnsafeBytes { raw in Result { () throws(LoadError) in try ResponseHead.parse(raw) } }.get()
        } catch {
            return fail(slot, "\(error)")
        }
        guard let head = parsed else { return }
        let expected = setup.options.transport == .wire ? 101 : 200
        guard head.status == expected else {
            return fail(slot, setup.options.transport == .wire ? "upgrade status \(head.status)" : "stream status \(head.status)")
        }
        let rest = Array(slots[slot].pending[head.length...])
        slots[slot].pending = []
        slots[slot].phase = .body
        if setup.options.transport == .sse && head.chunked { slots[slot].chunked = ChunkedDecoder() }
        if !rest.isEmpty { rest.withUnsafeBytes { body(slot, $0) } }
    }

    private func body(_ slot: Int, _ bytes: UnsafeRawBufferPointer) {
        switch setup.options.transport {
        case .wire: wireBytes(slot, bytes)
        case .sse: sseBody(slot, bytes)
        }
        counters.received.store(recorded, ordering: .relaxed)
    }
}

// MARK: Incomplete messages

extension SubscriberThread {
    /// Hands `bytes` to `parse` (which returns how many it used) straight from the read
    /// buffer when nothing is held back; keeps the unused tail in `keep` for the next read.
    private func buffered(_ slot: Int, _ bytes: UnsafeRawBufferPointer, _ keep: WritableKeyPath<Slot, [UInt8]>,
                          what: String, parse: (Int, UnsafeRawBufferPointer) -> Int) {
        if slots[slot][keyPath: keep].isEmpty {
            let used = parse(slot, bytes)
            if used < bytes.count && slots[slot].phase != .closed {
                slots[slot][keyPath: keep] = Array(UnsafeRawBufferPointer(rebasing: bytes[used...]))
            }
        } else {
            slots[slot][keyPath: keep].append(contentsOf: bytes)
            let held = slots[slot][keyPath: keep]
            let used = held.withUnsafeBytes { parse(slot, $0) }
            if slots[slot].phase != .closed { slots[slot][keyPath: keep].removeFirst(used) }
        }
        if slots[slot][keyPath: keep].count > Limits.maxMessageBytes + 16 { fail(slot, "\(what) over \(Limits.maxMessageBytes) bytes") }
    }
}

// MARK: The wire protocol

extension SubscriberThread {
    private func wireBytes(_ slot: Int, _ bytes: UnsafeRawBufferPointer) {
        buffered(slot, bytes, \.pending, what: "frame") { frames($0, $1) }
    }

    /// Handles every whole frame at the start of `bytes`; the number of bytes used.
    private func frames(_ slot: Int, _ bytes: UnsafeRawBufferPointer) -> Int {
        var position = 0
        while slots[slot].phase != .closed {
            let rest = UnsafeRawBufferPointer(rebasing: bytes[position...])
            switch FrameHead.parse(rest) {
            case .incomplete:
                return position
            case .invalid(let reason):
                fail(slot, reason)
                return position
            case .frame(let opcode, let final, let headLength, let length):
                guard rest.count >= headLength + length else { return position }
                let payload = UnsafeRawBufferPointer(rebasing: rest[headLength..<(headLength + length)])
                position += headLength + length
                frame(slot, opcode: opcode, final: final, payload)
            }
        }
        return position
    }

    private func frame(_ slot: Int, opcode: UInt8, final: Bool, _ payload: UnsafeRawBufferPointer) {
        switch opcode {
        case FrameHead.text, FrameHead.binary, FrameHead.continuation:
            if final && slots[slot].fragments.isEmpty { return message(slot, payload) }
            slots[slot].fragments.append(contentsOf: payload)
            if slots[slot].fragments.count > Limits.maxMessageBytes { return fail(slot, "message over \(Limits.maxMessageBytes) bytes") }
            if final {
                let whole = slots[slot].fragments
                slots[slot].fragments = []
                whole.withUnsafeBytes { message(slot, $0) }
            }
        case FrameHead.ping:
            send(slot, masker.frame(opcode: FrameHead.pong, Array(payload)))
        case FrameHead.close:
            send(slot, masker.frame(opcode: FrameHead.close, Array(payload.prefix(2))))
            fail(slot, "closed by the server")
        default:
            break  // pong, reserved
        }
    }

    private func message(_ slot: Int, _ payload: UnsafeRawBufferPointer) {
        if slots[slot].ready { return record(payload) }
        let stage = setup.options.stage
        switch WireControl.classify(payload) {
        case .handshake:
            if stage == "handshake" { return setReady(slot) }
            send(slot, masker.frame(opcode: FrameHead.text, Requests.auth(token: setup.options.token)))
            if stage == "listen" { send(slot, masker.frame(opcode: FrameHead.text, Requests.listen(path: path(for: slot)))) }
        case .answer(let number, let status):
            guard status == "ok" else {
                return fail(slot, "\(number == 1 ? "auth" : number == 2 ? "q" : String(number)) answered \(status)")
            }
            if number == (stage == "listen" ? 2 : 1) { setReady(slot) }
        case .other:
            break
        }
    }

    private func record(_ payload: UnsafeRawBufferPointer) {
        guard let seq = scanner.sequence(in: payload) else {
            otherEvents += 1
            return
        }
        guard recorded < seqs.count else {
            overflow += 1
            return
        }
        seqs[recorded] = Int32(truncatingIfNeeded: seq)
        times[recorded] = now
        recorded += 1
    }
}

// MARK: SSE

extension SubscriberThread {
    private func sseBody(_ slot: Int, _ bytes: UnsafeRawBufferPointer) {
        guard var decoder = slots[slot].chunked else { return sseBytes(slot, bytes) }
        do {
            try decoder.feed(bytes) { run in sseBytes(slot, run) }
        } catch {
            return fail(slot, "\(error)")
        }
        guard slots[slot].phase != .closed else { return }
        slots[slot].chunked = decoder
        if decoder.finished { fail(slot, "stream ended") }
    }

    /// Splits at blank lines ("\n\n"), keeping an incomplete event for the next read.
    private func sseBytes(_ slot: Int, _ bytes: UnsafeRawBufferPointer) {
        guard slots[slot].phase != .closed else { return }
        buffered(slot, bytes, \.event, what: "event") { events($0, $1) }
    }

    private func events(_ slot: Int, _ bytes: UnsafeRawBufferPointer) -> Int {
        var start = 0
        while slots[slot].phase != .closed, let end = MarkerScanner.find(Self.eventEnd, in: bytes, from: start) {
            let event = UnsafeRawBufferPointer(rebasing: bytes[start..<end])
            start = end + Self.eventEnd.count
            if slots[slot].ready {
                record(event)
                continue
            }
            switch sseEventName(event) {
            case "put", "patch": setReady(slot)
            case let name? where name == "cancel" || name == "auth_revoked": fail(slot, "stream \(name)")
            default: break
            }
        }
        return start
    }
}
