import CLibPQ
import HearthStore
import HearthSystem

/// LISTEN / NOTIFY on one connection: the change feed's wake-ups (`ChangeFeed`).
extension PGConnection {
    /// Subscribes this session to `channel` (lowercase letters, digits and `_`, not starting
    /// with a digit, at most 63 bytes). Notifications are read by `consumeNotifications()`
    /// or `waitForNotification(timeoutMilliseconds:)`; a notification sent in a transaction
    /// arrives only once it commits.
    func listen(_ channel: String) throws(StoreError) {
        try Self.validate(channel: channel)
        try execute("LISTEN \(channel)")
        channels.insert(channel)
    }

    /// Sends `payload` to every session listening on `channel` (when the current transaction
    /// commits, if there is one). Payloads are limited to 8000 bytes by the server.
    func notify(channel: String, payload: String) throws(StoreError) {
        try Self.validate(channel: channel)
        _ = try query("SELECT pg_notify($1, $2)", [.text(channel), .text(payload)])
    }

    /// The connection's socket, for waiting on it with poll(2); -1 when there is none.
    var socket: Int32 { PQsocket(handle) }

    /// Reads what the server sent without blocking and returns the payloads of the
    /// notifications received, oldest first (empty if none).
    func consumeNotifications() throws(StoreError) -> [String] {
        guard PQconsumeInput(handle) == 1 else { throw failure(nil, operation: "consume input") }
        return drainNotifications()
    }

    /// Waits up to `timeoutMilliseconds` (negative: without limit) for notifications and
    /// returns their payloads; empty when none came in time. A lost connection throws
    /// `.unavailable`.
    func waitForNotification(timeoutMilliseconds: Int32) throws(StoreError) -> [String] {
        // Notifications that arrived during an earlier statement are already buffered.
        let buffered = drainNotifications()
        if !buffered.isEmpty { return buffered }
        let clock = ContinuousClock()
        let deadline = clock.now.advanced(by: .milliseconds(max(0, timeoutMilliseconds)))
        while true {
            let fd = PQsocket(handle)
            guard fd >= 0 else { throw failure(nil, operation: "wait for notification") }
            let wait = timeoutMilliseconds < 0 ? -1 : Self.milliseconds(until: deadline, clock)
            let ready: Bool
            do {
                ready = try Syscall.waitReadable(fd, timeoutMilliseconds: wait)
            } catch {
                throw PGFailure.make(code: "poll", kind: .other, message: "poll failed: \(error)", operation: "wait for notification")
            }
            if !ready { return [] }
            let payloads = try consumeNotifications()  // readable after a lost connection too: it throws
            if !payloads.isEmpty { return payloads }
            if timeoutMilliseconds >= 0 && clock.now >= deadline { return [] }
        }
    }

    private func drainNotifications() -> [String] {
        var payloads: [String] = []
        while let notification = PQnotifies(handle) {
            payloads.append(notification.pointee.extra.map { String(cString: $0) } ?? "")
            PQfreemem(notification)
        }
        return payloads
    }
}
