import Dispatch
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// Waits for the first of some terminating signals, delivered through Dispatch signal
/// sources (their default action is turned off so the process is not killed first), and
/// calls `onHangup` for every `SIGHUP` meanwhile.
enum SignalWaiter {
    static func wait(for signals: [Int32], onHangup: @escaping @Sendable () -> Void) async -> Int32 {
        let queue = DispatchQueue(label: "hearth.signals")
        let sources = SourceBox()
        signal(SIGHUP, SIG_IGN)
        let hangup = DispatchSource.makeSignalSource(signal: SIGHUP, queue: queue)
        hangup.setEventHandler(handler: onHangup)
        sources.add(hangup)
        hangup.resume()
        return await withCheckedContinuation { continuation in
            for number in signals {
                signal(number, SIG_IGN)
                let source = DispatchSource.makeSignalSource(signal: number, queue: queue)
                source.setEventHandler {
                    guard sources.fire() else { return }
                    continuation.resume(returning: number)
                }
                sources.add(source)
                source.resume()
            }
        }
    }

    /// Keeps the sources alive and makes sure the continuation resumes once.
    private final class SourceBox: Sendable {
        private let state = Mutex<(sources: [any DispatchSourceSignal], fired: Bool)>(([], false))
        func add(_ source: any DispatchSourceSignal) { state.withLock { $0.sources.append(source) } }
        func fire() -> Bool {
            state.withLock { state in
                if state.fired { return false }
                state.fired = true
                return true
            }
        }
    }
}
