import CSystem
import Dispatch
import Synchronization

/// Gives memory back to the system after large requests and responses.
///
/// A PUT of 10^6 keys parses into tens of megabytes of short-lived values; glibc keeps
/// what is freed in its arenas, so the process stayed ~480 MB after three such writes were
/// deleted. After an exchange of at least `thresholdBytes` (request body plus response
/// body), one `malloc_trim(0)` runs `delay` seconds later on a utility queue, by when the
/// request's values and the response's buffer are freed; exchanges in the meantime share
/// that one trim. Small requests never trigger it (a trim walks the heap: a few ms). A
/// WebSocket session counts what it received, so sessions closed holding large incomplete
/// messages (`HTTPLimits.maxIncompleteBytes`) give their memory back too. A unit of at
/// least 1 MiB queued on an open stream (its first value, a large push) counts as it is
/// queued (`HTTPServerConfiguration.largeStreamUnit`): the stream's own exchange ends only
/// when it closes.
final class MemoryTrimmer: Sendable {
    /// Exchanges smaller than this (1 MiB) leave the heap alone.
    static let thresholdBytes = 1 << 20
    /// Seconds between a large exchange and the trim.
    static let delay: Double = 1

    private let scheduled = Atomic<Bool>(false)
    private let completed = Atomic<Int>(0)
    private let queue = DispatchQueue(label: "hearth.memory-trim", qos: .utility)
    private let onTrim: @Sendable () -> Void

    /// - Parameter onTrim: called after each trim (tests wait on it).
    init(onTrim: @escaping @Sendable () -> Void = {}) {
        self.onTrim = onTrim
    }

    /// Trims done so far (tests, metrics).
    var trims: Int { completed.load(ordering: .relaxed) }

    /// Called with each exchange's bytes (from the access record).
    func noteExchange(bytes: Int) {
        guard bytes >= Self.thresholdBytes,
              !scheduled.exchange(true, ordering: .acquiringAndReleasing) else { return }
        queue.asyncAfter(deadline: .now() + Self.delay) { [self] in
            scheduled.store(false, ordering: .releasing)
            _ = hearth_malloc_trim()
            completed.add(1, ordering: .relaxed)
            onTrim()
        }
    }
}
