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

    /// The loop's batch ended: write what it queued.
    func writeDeferred() {
        writeIsDeferred = false
        pump()
    }
}
