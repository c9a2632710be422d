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
    /// For a query stream whose window is decided child by child (no limit): re-reads
    /// only the children changes touched (see `QueryChildrenRefresh`).
    let rereadChildren: QueryChildrenRefresh?

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
    /// Query streams: a re-read is running; the tag of the whole result the client has
    /// (nil once child re-reads changed its window).
    var refreshing = false
    var lastResultTag: [UInt8]?
    /// Query streams: what changes since the last re-read asked for. A whole re-read, with
    /// the newest such change's seq; or, with `rereadChildren`, these children, each with
    /// the newest change's seq that touched it.
    var owedWhole: Int64?
    var owedChildren: [JSONKey: Int64] = [:]
    /// With `rereadChildren`: hashes of the keys of the children the client has in its
    /// window (nil: not tracked, as the window had more than `maxTrackedWindowKeys`).
    /// A hash shared with a key outside the window only costs that key a `null` the client
    /// did not need; a key in the window is always found.
    var windowKeys: Set<Int>?

    var owesRefresh: Bool { owedWhole != nil || !owedChildren.isEmpty }

    init(location: DataPath, gate: any StreamGate, address: String, refresh: QueryRefresh?,
         rereadChildren: QueryChildrenRefresh? = nil) {
        self.location = location
        self.gate = gate
        self.address = address
        self.refresh = refresh
        self.rereadChildren = rereadChildren
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
    /// For a query whose window is decided child by child: the hashes of the result's
    /// child keys (`JSONKey.hashValue`), nil when not tracked.
    public var childKeyHashes: Set<Int>?

    public init(value: JSONValue, tag: [UInt8], seq: Int64, childKeyHashes: Set<Int>? = nil) {
        self.value = value
        self.tag = tag
        self.seq = seq
        self.childKeyHashes = childKeyHashes
    }
}

/// A child a query stream's re-read looks at: its key, and whether the client may have it
/// in its window (it must then get a `null` if it left).
public struct QueryChildProbe: Sendable {
    public var key: JSONKey
    public var mayBeInWindow: Bool

    public init(key: JSONKey, mayBeInWindow: Bool) {
        self.key = key
        self.mayBeInWindow = mayBeInWindow
    }
}

/// What a re-read of some children of a query stream found.
public struct QueryChildrenResult: Sendable {
    /// What brings the client's window up to date: `put /<key>` for one child, `patch /`
    /// for several (each child's value, `null` for one that left); nil when no probed child
    /// is in the window or may have been.
    public var event: StreamEvent?
    /// For each probe, in order: whether the child is in the window now.
    public var inWindow: [Bool]
    /// The change-log seq the read was in sync with.
    public var seq: Int64

    public init(event: StreamEvent?, inWindow: [Bool], seq: Int64) {
        self.event = event
        self.inWindow = inWindow
        self.seq = seq
    }
}

/// Re-reads a query stream's result and hands it to the completion (nil on failure). A
/// query stream's client view is the query's result, so when a change touches its
/// location the hub re-reads it and sends `put /` with the new result if it differs: the
/// view stays equal to the result as children enter and leave the window.
public typealias QueryRefresh = @Sendable (@escaping @Sendable (QueryResult?) -> Void) -> Void

/// Re-reads the given children of a query stream whose window is decided child by child
/// (a query without a limit: whether a child is in it depends on that child alone), and
/// hands the completion the event for them (nil on failure). A change below such a
/// stream's location re-reads the children it touched instead of the whole result, which
/// can be the whole location.
public typealias QueryChildrenRefresh = @Sendable ([QueryChildProbe], @escaping @Sendable (QueryChildrenResult?) -> Void) -> Void
