#if canImport(Glibc)
import Glibc
#endif

/// An open-ended body on a connection: the mode of a server-sent event stream
/// (`HTTPConnection.Mode.events`), and the output side of a WebSocket session
/// (`WebSocketChannel.stream`). From its head on the connection reads no more requests and
/// only writes, under `options.maxBufferedBytes`. Confined to the connection's I/O queue.
final class OpenStream {
    let options: HTTPStreamOptions
    /// Where each queued unit (the head, then each event) ends in the connection's output,
    /// so an overflow can drop whole units that have not started and end on a boundary.
    /// Cleared whenever the output drains (`resetUnits`).
    private(set) var unitEnds: [Int] = []
    /// How many of `unitEnds`, from the first, are written (as far as the last look saw):
    /// where `bytesNotStarted` resumes, so a backlog of many small units costs each send
    /// no walk over those already gone.
    private var unitsWritten = 0
    /// Bytes queued on the stream (its access record's `bytes`).
    var bytesSent = 0
    /// The stream's end was reported (`endStream`): its last bytes are out, or it closed.
    private(set) var ended = false
    /// The request the stream answers, for the access log (written when the stream ends).
    private var request: CurrentRequest?

    init(options: HTTPStreamOptions, request: CurrentRequest?) {
        self.options = options
        self.request = request
    }

    /// Of an output of `count` bytes of which `written` went out: the bytes of the units
    /// behind the one going out (the first not fully written), which have not started.
    /// `options.maxBufferedBytes` bounds these: the unit going out is the reader's to take,
    /// whatever its size, so a value larger than the bound reaches a reader that reads
    /// even while later events queue behind it.
    func bytesNotStarted(_ count: Int, written: Int) -> Int {
        while unitsWritten < unitEnds.count && unitEnds[unitsWritten] <= written { unitsWritten += 1 }
        return count - (unitsWritten < unitEnds.count ? unitEnds[unitsWritten] : count)
    }

    /// A unit queued, ending at `end` in the output.
    func unitQueued(endingAt end: Int) {
        unitEnds.append(end)
    }

    /// The output's units from here on: `ends` (none once it drained or overflowed).
    func resetUnits(_ ends: [Int] = []) {
        unitEnds = ends
        unitsWritten = 0
    }

    var requestID: String? { request?.requestID }

    /// Marks the end once: true the first time, with the request to log.
    func end() -> (first: Bool, request: CurrentRequest?) {
        if ended { return (false, nil) }
        ended = true
        defer { request = nil }
        return (true, request)
    }
}

extension HTTPConnection {
    /// Queues the head of a close-delimited body and hands out the stream. Requests the
    /// client pipelined behind this one are dropped: the connection is the stream's now.
    func beginStream(_ head: HTTPResponse, options: HTTPStreamOptions, opened: @Sendable (HTTPEventStream?) -> Void,
                     after exchange: HTTPExchange) {
        let stream = OpenStream(options: options, request: exchange.takeCurrent())
        mode = .events(stream)
        startOpenEnded(stream, head) { HTTPResponseSerializer.serializeStreamHead($0, into: &$1) }
        context.counters.openStreams.wrappingAdd(1, ordering: .relaxed)
        opened(HTTPEventStream(connection: self))
    }

    /// What every open-ended answer shares: from here on the connection reads no more
    /// requests (the exchange, its parser with it, is gone) and writes `head` then output
    /// bounded by the stream's options.
    func startOpenEnded(_ stream: OpenStream, _ head: HTTPResponse, serialize: (HTTPResponse, inout [UInt8]) -> Void) {
        var head = head
        if let id = stream.requestID { head.headers.add("X-Request-Id", id) }
        serialize(head, &output)
        stream.resetUnits([output.count])
        lifecycle.streamStarted(now: context.clock())
    }

    /// Queues bytes on the open stream (on `loop.queue`).
    func streamSend(_ bytes: [UInt8]) {
        // A send still in the ring goes first: its result decides what is queued after it.
        if ringPending { loop.settleRingSend(self) }
        guard !closed, let stream, !closeAfterFlush else { return }
        let waiting = output.count - outputOffset
        if waiting > 0 {
            let behind = stream.bytesNotStarted(output.count, written: outputOffset)
            let overBound = behind > 0 && behind + bytes.count > stream.options.maxBufferedBytes
            if overBound || context.counters.unsent.current + bytes.count > context.counters.unsent.limit {
                if !overBound { context.counters.unsentRefusals.wrappingAdd(1, ordering: .relaxed) }
                overflow(stream)
                return
            }
        }
        let wasDrained = outputOffset == output.count
        stream.bytesSent += bytes.count
        if bytes.count >= HTTPServerConfiguration.largeStreamUnitBytes { context.largeStreamUnit?(bytes.count) }
        var unsent = bytes[...]
        if wasDrained && !loop.deferringWrites && !pumping {
            // Nothing waits before these bytes: written straight from the caller's buffer
            // (in a fan-out, the one every stream shares), with no copy, no buffer of our
            // own and no clock read. Only what the socket does not take is queued. In a
            // fan-out walk the send goes through the loop's ring, and the rest at its flush.
            if loop.queueRingSend(self, bytes) { return }
            guard let written = sendNow(bytes) else { return }
            if written == bytes.count { return }
            unsent = bytes[written...]
        }
        queueUnsent(unsent, on: stream, wasDrained: wasDrained)
    }

    /// Queues what a send did not take, as one unit of the stream, and writes it when the
    /// socket takes more.
    private func queueUnsent<Bytes: Collection<UInt8>>(_ unsent: Bytes, on stream: OpenStream, wasDrained: Bool) {
        dropWrittenOutput(of: stream)
        output.append(contentsOf: unsent)
        stream.unitQueued(endingAt: output.count)
        if wasDrained { lifecycle.streamQueued(now: context.clock()) }
        writeSoon()
    }

    /// Written output kept before a stream drops it: `dropWrittenOutput`.
    static let streamCompactionBytes = 256 * 1024

    /// Drops the written head of a stream's output once it is at least
    /// `streamCompactionBytes` and at least as long as what is left to write. Output is
    /// otherwise released only when it drains, so a reader that reads, but never enough to
    /// let it drain, would keep everything written since (counted against
    /// `maxUnsentBytes`, which it could fill alone) while staying inside its own bound.
    /// What is left is copied to the front, so each byte is copied about once at most.
    private func dropWrittenOutput(of stream: OpenStream) {
        let written = outputOffset
        guard written >= Self.streamCompactionBytes, written >= output.count - written else { return }
        output.removeSubrange(0..<written)
        stream.resetUnits(stream.unitEnds.compactMap { $0 > written ? $0 - written : nil })
        outputOffset = 0
    }

    /// The result of this connection's send of `bytes` through the loop's ring
    /// (`ringResult`: bytes taken, or `-errno`), handled once, as `sendNow`'s: all taken,
    /// done; some or none (`EAGAIN`: the socket is full), the rest queued; any other error,
    /// the peer is gone. The loop counts the sends (`IOLoop.flushRing`), once per flush.
    func finishRingSend(_ bytes: UnsafeRawBufferPointer) {
        guard ringPending, let result = ringResult else { return }
        ringPending = false
        ringResult = nil
        guard !closed, let stream else { return }
        if result < 0 && result != -EAGAIN {
            close()  // EPIPE, ECONNRESET: the peer is gone.
            return
        }
        let written = Int(max(0, result))
        if written >= bytes.count { return }
        queueUnsent(bytes[written...], on: stream, wasDrained: outputOffset == output.count)
    }

    /// A reader fell too far behind: what has not started going out is dropped (memory is
    /// released at once), the unit being written is finished, `overflowBytes` (SSE:
    /// `cancel`) follow, and the connection closes once they are written. A reader that
    /// catches up therefore sees whole events, then `cancel`, then the end; one that never
    /// reads again is closed by `writeTimeout`.
    private func overflow(_ stream: OpenStream) {
        context.counters.streamOverflows.wrappingAdd(1, ordering: .relaxed)
        if case .webSocket = mode { logPolicyClose(.policyViolation, Self.slowReaderReason) }
        let cut = stream.unitEnds.first(where: { $0 >= outputOffset }) ?? output.count
        if cut < output.count { output.removeSubrange(cut...) }
        stream.resetUnits()
        output.append(contentsOf: stream.options.overflowBytes)
        closeAfterFlush = true
        pump()
    }

    /// Queues the stream's last bytes and closes once they are written.
    func streamFinish(_ bytes: [UInt8]) {
        guard !closed, stream != nil, !closeAfterFlush else { return }
        output.append(contentsOf: bytes)
        lifecycle.streamQueued(now: context.clock())
        closeAfterFlush = true
        pump()
    }

    /// Reports the end of an open stream once: when its last bytes are written (before
    /// the lingering close, so the application forgets it as soon as the peer has
    /// everything), or when the connection closes first.
    func endStream() {
        switch mode {
        case .events(let stream):
            let (first, request) = stream.end()
            guard first else { return }
            logAccess(request, status: 200, bytes: stream.bytesSent, isStream: true)
            context.counters.openStreams.wrappingSubtract(1, ordering: .relaxed)
            stream.options.onClose()
        case .webSocket(let channel):
            let (first, request) = channel.stream.end()
            guard first else { return }
            webSocketEnded(channel, request: request)
        case .exchange, .closed:
            return
        }
    }
}
