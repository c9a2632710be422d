/// How work reaches a connection from other threads: posted to its I/O loop's mailbox
/// (`IOLoop.post`), where stream output queued by a batch is written once at its end.
extension HTTPConnection {
    /// `connections` sorted by the loop each lives on, in their order within each loop. The
    /// loops are few (one per core): found by identity in a short list, not hashed.
    static func byLoop(_ connections: [HTTPConnection]) -> [(loop: IOLoop, connections: [HTTPConnection])] {
        var groups: [(loop: IOLoop, connections: [HTTPConnection])] = []
        var last = -1
        for connection in connections {
            if last < 0 || groups[last].loop !== connection.loop {
                last = groups.firstIndex(where: { $0.loop === connection.loop }) ?? -1
                if last < 0 {
                    groups.append((connection.loop, []))
                    groups[groups.count - 1].connections.reserveCapacity(connections.count)
                    last = groups.count - 1
                }
            }
            groups[last].connections.append(connection)
        }
        return groups
    }

    /// Runs `body` on this connection's loop: at once when already there, else posted in
    /// order behind the loop's other posted work.
    func perform(_ body: @escaping @Sendable (HTTPConnection) -> Void) {
        if loop.isCurrent {
            body(self)
        } else {
            loop.post { body(self) }
        }
    }

    /// Writes stream output now, or at the end of the loop's running batch.
    func writeSoon() {
        guard loop.deferringWrites else { return pump() }
        if !writeIsDeferred {
            writeIsDeferred = true
            loop.deferWrite(self)
        }
    }

    /// Copies the start of the output not written yet into `buffer`, as much as fits:
    /// the count (0 when there is none, or the connection is closed).
    func copyUnsentOutput(into buffer: UnsafeMutableRawBufferPointer) -> Int {
        guard !closed, outputOffset < output.count else { return 0 }
        let count = min(buffer.count, output.count - outputOffset)
        output.withUnsafeBytes { bytes in
            buffer.copyMemory(from: UnsafeRawBufferPointer(rebasing: bytes[outputOffset..<(outputOffset + count)]))
        }
        return count
    }

    /// The loop's ring sent `count` bytes from the start of the unsent output (a copy of
    /// them, `copyUnsentOutput`): they count as written, as `flush`'s own sends do.
    func wroteThroughRing(_ count: Int) {
        outputOffset += count
        if outputOffset < output.count { lifecycle.wrote(now: context.clock()) }
    }

    /// The loop's batch ended: write what it queued.
    func writeDeferred() {
        writeIsDeferred = false
        pump()
    }
}
