import HearthSystem

/// A connection's readiness in its loop's epoll set (`IOLoop.Poller`): watched
/// one-shot, handled on the loop's queue, armed again with what it wants then.
extension HTTPConnection {
    /// Starts reading: watched in the loop's epoll under `token`. On `loop.queue`.
    func start(token: UInt64) {
        self.token = token
        arm(adding: true)
    }

    /// What reading waits for: input, and the peer's end of it.
    static let readEvents = EventPoll.readable | EventPoll.peerClosed

    /// The loop's epoll reported `events` (and disarmed the descriptor): read and write as
    /// they allow, then arm again with what is wanted now. On `loop.queue`.
    func ready(_ events: UInt32) {
        if closed { return }
        armedEvents = nil
        let failed = events & (EventPoll.hangUp | EventPoll.error) != 0
        if !readSuspended, failed || events & Self.readEvents != 0 {
            readable()
            if closed { return }
        }
        if writeWanted, failed || events & EventPoll.writable != 0 {
            writable()
            if closed { return }
        }
        arm()
    }

    /// Arms the descriptor for what the connection wants now, unless it already is
    /// (`adding`: enters it into the epoll set). With nothing wanted it stays disarmed:
    /// armed for nothing, a hang-up would still be reported, again and again, to a
    /// connection not reading it.
    func arm(adding: Bool = false) {
        if closed { return }
        var events: UInt32 = 0
        if !readSuspended { events |= Self.readEvents }
        if writeWanted { events |= EventPoll.writable }
        guard events != 0, events != armedEvents else { return }
        do {
            if adding {
                try loop.poller.watch(fd, events: events, token: token)
            } else {
                try loop.poller.arm(fd, events: events, token: token)
            }
            armedEvents = events
        } catch {
            context.log("HTTP connection: \(error)")
            close()
        }
    }

    /// Output is waiting on a full socket: wait until it takes more.
    func armWrite() {
        if writeWanted { return }
        writeWanted = true
        arm()
    }
}
