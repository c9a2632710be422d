import Dispatch
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// Waits for the first of some signals, delivered through Dispatch signal sources (the
/// default action is turned off so the process is not killed first).
enum SignalWaiter {
    static func wait(for signals: [Int32]) async -> Int32 {
        let queue = DispatchQueue(label: "hearth.signals")
        return await withCheckedContinuation { continuation in
            let sources = SourceBox()
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
