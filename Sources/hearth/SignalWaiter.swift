import Dispatch
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// Catches some terminating signals through Dispatch signal sources (their default action
/// is turned off so the process is not killed first) and calls `onHangup` for every
/// `SIGHUP`. The sources are installed by `init`, so a signal that arrives before anyone
/// awaits `next()` is kept, not lost: `serve` installs them before it starts listening,
/// because a supervisor (or a test) may send SIGTERM as soon as "listening on" appears.
final class SignalWaiter: Sendable {
    /// The sources (kept so they live as long as the waiter), the signal once it came, and
    /// whoever awaits it. A tuple: Swift 6.3's region checker refuses a struct holding
    /// the non-Sendable source existentials here.
    private let state = Mutex<(sources: [any DispatchSourceSignal], received: Int32?,
                               waiter: CheckedContinuation<Int32, Never>?)>(([], nil, nil))

    /// How long `init` waits for Dispatch to have registered its sources, at most.
    static let registrationWaitSeconds = 10

    /// Returns once every source is registered: `resume()` only asks Dispatch's manager
    /// thread to register a source, and until it has, the signal's action is `SIG_IGN`
    /// and a signal sent then is lost. On a busy machine that took longer than starting
    /// to listen, so a SIGTERM sent at "listening on" was never seen.
    init(for signals: [Int32], onHangup: @escaping @Sendable () -> Void) {
        let queue = DispatchQueue(label: "hearth.signals")
        let registered = DispatchGroup()
        func install(_ number: Int32, _ handler: @escaping @Sendable () -> Void) {
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: queue)
            source.setEventHandler(handler: handler)
            registered.enter()
            source.setRegistrationHandler { registered.leave() }
            source.resume()
            keep(source)
        }
        install(SIGHUP, onHangup)
        for number in signals {
            install(number) { [weak self] in self?.received(number) }
        }
        _ = registered.wait(timeout: .now() + .seconds(Self.registrationWaitSeconds))
    }

    private func keep(_ source: any DispatchSourceSignal) { state.withLock { $0.sources.append(source) } }

    /// The first terminating signal, at once if it already came.
    func next() async -> Int32 {
        await withCheckedContinuation { continuation in
            let ready: Int32? = state.withLock { state in
                if let received = state.received { return received }
                state.waiter = continuation
                return nil
            }
            if let ready { continuation.resume(returning: ready) }
        }
    }

    private func received(_ number: Int32) {
        let waiter: CheckedContinuation<Int32, Never>? = state.withLock { state in
            guard state.received == nil else { return nil }
            state.received = number
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume(returning: number)
    }
}
