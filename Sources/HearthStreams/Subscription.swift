import HearthJSON

/// One open stream, as the hub tracks it.
///
/// `@unchecked Sendable`: `location`, `gate`, `address` are immutable; every `var` is
/// touched only on the hub's fan-out queue.
public final class Subscription: @unchecked Sendable {
    public let location: DataPath
    public let gate: any StreamGate
    let address: String
    /// For a stream with a query: re-reads the query's result (see `QueryRefresh`).
    let refresh: QueryRefresh?

    /// Where events go (the transport encodes them: SSE frames, wire pushes); nil until
    /// the initial snapshot or replay was handed over (`StreamHub.start`).
    var eventSink: (any StreamEventSink)?
    /// Changes that arrived while the initial snapshot was read; nil once live.
    var pending: [StreamChange]? = []
    /// The last change-log seq this subscriber is in sync with.
    var deliveredThrough: Int64 = 0
    /// Set once the stream ended; `finalVerdict` is what it still owes its client when it
    /// ended before `start`.
    var ended = false
    var finalVerdict: StreamVerdict?
    /// Query streams: a re-read is running; another change came in meanwhile; the tag of
    /// the result the client has.
    var refreshing = false
    var dirty = false
    var lastResultTag: [UInt8]?

    init(location: DataPath, gate: any StreamGate, address: String, refresh: QueryRefresh?) {
        self.location = location
        self.gate = gate
        self.address = address
        self.refresh = refresh
    }
}

/// A query's result as one consistent read saw it.
public struct QueryResult: Sendable {
    /// The result in client form (what `put /` carries).
    public var value: JSONValue
    /// A digest of the result, to tell whether it changed.
    public var tag: [UInt8]
    /// The change-log seq the read was in sync with.
    public var seq: Int64

    public init(value: JSONValue, tag: [UInt8], seq: Int64) {
        self.value = value
        self.tag = tag
        self.seq = seq
    }
}

/// Re-reads a query stream's result and hands it to the completion (nil on failure). A
/// query stream's client view is the query's result, so when a change touches its
/// location the hub re-reads it and sends `put /` with the new result if it differs: the
/// view stays equal to the result as children enter and leave the window.
public typealias QueryRefresh = @Sendable (@escaping @Sendable (QueryResult?) -> Void) -> Void
