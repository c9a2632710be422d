import HearthJSON

/// One open stream, as the hub tracks it.
///
/// `@unchecked Sendable`: `location`, `gate`, `address` are immutable; every `var` is
/// touched only on the hub's fan-out queue.
public final class Subscription: @unchecked Sendable {
    public let location: DataPath
    public let gate: any StreamGate
    let address: String

    /// Where events go; nil until the initial snapshot or replay was handed over.
    var sink: (any StreamSink)?
    /// Changes that arrived while the initial snapshot was read; nil once live.
    var pending: [StreamChange]? = []
    /// The last change-log seq this subscriber is in sync with.
    var deliveredThrough: Int64 = 0
    /// Set once the stream ended; `finalBytes` are what it still owes its client.
    var ended = false
    var finalBytes: [UInt8]?

    init(location: DataPath, gate: any StreamGate, address: String) {
        self.location = location
        self.gate = gate
        self.address = address
    }
}
