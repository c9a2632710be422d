import Synchronization

/// A `PushIDGenerator` that many threads may share (the server has one per process):
/// the generator's state sits behind a `Mutex`, so IDs stay strictly increasing across
/// all callers (docs/protocol/rest.md §1.6).
@available(macOS 15.0, *)
public final class SharedPushIDGenerator: Sendable {
    private let generator: Mutex<PushIDGenerator>

    public init(_ generator: PushIDGenerator = PushIDGenerator()) {
        self.generator = Mutex(generator)
    }

    /// The next push ID.
    public func next() -> String {
        generator.withLock { $0.next() }
    }
}
