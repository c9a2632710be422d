#if canImport(Glibc)
import Glibc
#endif
import CSystem

/// Socket sends handed to the kernel many at a time: an io_uring submission queue of
/// `send`s, one `io_uring_enter` for all of them, which also waits for their completions.
/// A fan-out of one push to thousands of connections then costs one system call's entry
/// and exit per `capacity` sends instead of one per connection (about a fifth of the
/// kernel's cost of a push on a 2-core VM, docs/bench/history.md).
///
/// Every send is non-blocking (`MSG_DONTWAIT`): a socket whose buffer is full completes at
/// once with what it took (or `EAGAIN`), never waits, so `flush` returns as soon as the
/// kernel has tried them all. `MSG_NOSIGNAL`: a peer that went away is `EPIPE`, no signal.
///
/// Not `Sendable`: one thread at a time (an I/O loop's queue) queues, flushes and reaps.
public final class SendRing {
    /// Sends queued before one flush (the ring's size). Enough to make the system call's
    /// own cost negligible per send, small enough that the ring's memory (64 bytes a slot,
    /// twice as many completion slots of 16) stays under 32 KiB a loop.
    public static let defaultCapacity: UInt32 = 256

    /// How a flush makes its `io_uring_enter` call: `kernel` makes the call and returns
    /// its result (-1 with `errno` set on failure). The ring's own is `{ $0() }`; tests
    /// stand in one that fails as the kernel may, which no healthy ring does on demand.
    public typealias Enter = (_ kernel: () -> Int32) -> Int32

    private let ring: OpaquePointer
    private let enter: Enter
    /// How many sends the ring holds.
    public let capacity: Int
    /// Sends queued or submitted whose completions were not reaped yet.
    public private(set) var inFlight = 0

    /// A ring of `capacity` sends (rounded up to a power of two by the kernel). Throws when
    /// the kernel refuses io_uring (`ENOSYS`; `EPERM` under `kernel.io_uring_disabled` or a
    /// container's seccomp filter): callers send one `send()` at a time then.
    public init(capacity: UInt32 = SendRing.defaultCapacity, enter: @escaping Enter = { $0() }) throws(SystemError) {
        guard let ring = hearth_send_ring_open(capacity) else {
            throw SystemError(errno: Glibc.errno, call: "io_uring_setup")
        }
        self.ring = ring
        self.enter = enter
        self.capacity = Int(hearth_send_ring_capacity(ring))
    }

    /// Closing the ring's descriptor makes the kernel cancel what it still holds.
    deinit {
        hearth_send_ring_close(ring)
    }

    /// True when `queue` would refuse for want of room: flush first.
    public var isFull: Bool { inFlight >= capacity }

    /// Queues a send of `bytes` to `fd`, reported under `tag` by the next `flush`. The
    /// bytes must stay valid and unchanged until then. False when the ring is full or the
    /// bytes are more than one send carries (send them with `Syscall.send`).
    public func queue(_ fd: Int32, _ bytes: UnsafeRawBufferPointer, tag: UInt64) -> Bool {
        guard hearth_send_ring_queue(ring, fd, bytes.baseAddress, bytes.count, tag) == 0 else { return false }
        inFlight += 1
        return true
    }

    /// Submits every queued send and waits until each has completed, calling `completed`
    /// with its tag and result (bytes sent, or `-errno`: `-EAGAIN` for a full socket) in the
    /// order the kernel finished them. `EINTR` and `EAGAIN` from the kernel (a signal; no
    /// memory for the submission just now) are retried. Any other failure of the call is
    /// thrown; the sends it did not report are then unknown (their connections must be
    /// closed: their streams may have lost bytes), and the ring must not be used again.
    public func flush(_ completed: (_ tag: UInt64, _ result: Int32) -> Void) throws(SystemError) {
        var tag: UInt64 = 0
        var result: Int32 = 0
        while inFlight > 0 {
            let submit = hearth_send_ring_unsubmitted(ring)
            let wait = UInt32(inFlight)
            switch try Syscall.retrying("io_uring_enter", { Int(enter { hearth_send_ring_enter(ring, submit, wait) }) }) {
            case .done, .wouldBlock: break
            }
            while hearth_send_ring_reap(ring, &tag, &result) == 1 {
                inFlight -= 1
                completed(tag, result)
            }
        }
    }
}
