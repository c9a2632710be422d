import HearthSystem

/// A loop's sends through its `SendRing`: a fan-out walk's (one push to many connections)
/// and a batch's gathered output (`IOLoop`'s type comment; docs/linux-notes.md, "io_uring
/// for a push's sends"). Everything here runs on the loop's queue.
extension IOLoop {
    /// `body` for each of `connections` in order, as `forEach(_:yieldingToAnswers:)`, where
    /// `body` sends `bytes` (the same array) to the connection: each connection's send that
    /// would go out at once is queued in the ring (`queueRingSend`), and the ring is
    /// flushed whenever it is full, before answers run, and at the walk's end.
    func forEach(_ connections: [HTTPConnection], sending bytes: [UInt8], _ body: (HTTPConnection) -> Void) {
        guard ring != nil else { return forEach(connections, yieldingToAnswers: body) }
        bytes.withUnsafeBytes { raw in
            walkBytes = raw
            forEach(connections, yieldingToAnswers: body)
            flushRing()
            walkBytes = nil
        }
    }

    /// Queues `connection`'s send of `bytes` in the ring, when a walk of these very bytes is
    /// running: true when the ring took it (its result comes at the flush, through
    /// `HTTPConnection.finishRingSend`). False: send it now, as without a ring.
    func queueRingSend(_ connection: HTTPConnection, _ bytes: [UInt8]) -> Bool {
        guard let ring, let walkBytes,
              bytes.withUnsafeBytes({ $0.baseAddress == walkBytes.baseAddress && $0.count == walkBytes.count })
        else { return false }
        if ring.isFull { flushRing() }
        // A ring that failed is gone after the flush: the caller sends on its own.
        guard self.ring != nil, ring.queue(connection.fd, walkBytes, tag: UInt64(ringSenders.count)) else { return false }
        ringSenders.append(connection)
        connection.ringPending = true
        return true
    }

    /// Submits the ring's sends and waits for them (on `queue`); each connection then handles
    /// its result. Every result is taken before any is handled: handling one may run other
    /// code on this loop that sends to a connection still waiting for its own
    /// (`settleRingSend`). If the kernel fails the submission itself, what reached the
    /// connections without a result is unknown: they are closed (their clients reconnect
    /// and resume), and the loop sends with `send()` from then on.
    func flushRing() {
        guard let ring, ring.inFlight > 0, let walkBytes else { return }
        var sent = 0
        do throws(SystemError) {
            try ring.flush { tag, result in
                if result >= 0 { sent += 1 }
                ringSenders[Int(tag)].ringResult = result
            }
        } catch {
            abandonRing(error, closing: ringSenders.filter { $0.ringResult == nil }, whose: "push")
        }
        countRingSends(sent, ringSenders.first?.context)
        swap(&ringSenders, &finishing)
        for connection in finishing { connection.finishRingSend(walkBytes) }
        finishing.removeAll(keepingCapacity: true)
    }

    /// Before anything else is written to `connection`, whose send is in the ring: the
    /// ring is flushed, and its result handled if that has not happened yet.
    func settleRingSend(_ connection: HTTPConnection) {
        flushRing()
        if let walkBytes { connection.finishRingSend(walkBytes) }
    }

    /// Bytes of gathered output one flush of the ring carries at most (`sendThroughRing`),
    /// copied into the loop's arena so that nothing points into a connection's buffer
    /// while the kernel holds it: 256 KiB, a ring's 256 sends of up to 1 KiB each, or
    /// fewer larger ones.
    static let ringArenaBytes = 256 * 1024

    /// The output a batch gathered for `writers` (the loop fell behind: each has one or
    /// more pushes waiting), sent through the ring before each connection writes on its
    /// own: up to a ring's worth of connections per system call, each send a copy of the
    /// start of its connection's unsent output in the arena. What a send took counts as
    /// written (`HTTPConnection.wroteThroughRing`); the rest, and any error, is left to the
    /// connection's own write after it, which sends it or finds the error as it would
    /// have. One writer sends on its own: a ring would not save a call.
    func sendThroughRing(_ writers: [HTTPConnection]) {
        guard let ring, writers.count > 1 else { return }
        let arena = ringArena ?? .allocate(byteCount: Self.ringArenaBytes, alignment: 16)
        ringArena = arena
        var used = 0
        var senders: [HTTPConnection] = []
        senders.reserveCapacity(min(writers.count, ring.capacity))
        func flush() -> Bool {
            var sent = 0
            do throws(SystemError) {
                try ring.flush { tag, result in
                    guard result > 0 else { return }
                    sent += 1
                    senders[Int(tag)].wroteThroughRing(Int(result))
                }
            } catch {
                // What reached the sockets is unknown: as after a failed walk. The rest of
                // the writers write on their own.
                abandonRing(error, closing: senders, whose: "pushes")
                return false
            }
            countRingSends(sent, senders.first?.context)
            senders.removeAll(keepingCapacity: true)
            used = 0
            return true
        }
        for connection in writers {
            if ring.isFull || used == arena.count { guard flush() else { return } }
            let room = UnsafeMutableRawBufferPointer(rebasing: arena[used...])
            let count = connection.copyUnsentOutput(into: room)
            if count == 0 { continue }
            guard ring.queue(connection.fd, UnsafeRawBufferPointer(rebasing: arena[used..<(used + count)]),
                             tag: UInt64(senders.count)) else { continue }
            senders.append(connection)
            used += count
        }
        if ring.inFlight > 0 { _ = flush() }
    }

    /// The kernel failed a flush's submission (`io_uring_enter`): what reached
    /// `connections`, whose sends had no result, is unknown, so each is closed without
    /// another byte (its client reconnects and resumes from what it has), and the loop
    /// sends with `send()` from now on.
    private func abandonRing(_ error: SystemError, closing connections: [HTTPConnection], whose what: String) {
        ring = nil
        connections.first?.context.log(
            "\(queue.label): io_uring_enter failed (\(error)); closing \(connections.count) connection\(connections.count == 1 ? "" : "s") whose \(what) may be lost; sending with send() from now on")
        for connection in connections {
            connection.ringPending = false  // the ring is gone: nothing to settle
            connection.writeIsDeferred = false  // nothing more of a stream whose bytes are unknown
            connection.close()
        }
    }

    /// Counts `sent` sends that went out through the ring, once per flush.
    private func countRingSends(_ sent: Int, _ context: HTTPConnection.Context?) {
        guard sent > 0, let counters = context?.counters else { return }
        counters.streamWrites.wrappingAdd(sent, ordering: .relaxed)
        counters.ringSends.wrappingAdd(sent, ordering: .relaxed)
    }
}
