/// One persisted onDisconnect operation: its session, its place in the session's order,
/// and the operation and registrant as JSON text (encoded by the database core).
public struct OnDisconnectRecord: Sendable, Equatable {
    public var session: String
    public var position: Int64
    public var operation: String
    public var caller: String

    public init(session: String, position: Int64, operation: String, caller: String) {
        self.session = session
        self.position = position
        self.operation = operation
        self.caller = caller
    }
}

/// What a write depends on when it is committed on the strength of this node's lease on a
/// shared engine: the lease (`epoch`, the node id its lease row carries) must still be
/// held, by the database's rows, inside the write's own transaction; and, for an
/// onDisconnect operation, its record (`session`, `position`) must still be held under
/// that lease, and is removed by the same transaction, so it is written exactly once
/// whichever node runs it. On a store with one node (`TreeView.holds(_:)`'s default)
/// every fence holds.
public struct WriteFence: Sendable, Equatable {
    /// The lease the write depends on; nil: the node's lease at commit time.
    public var epoch: String?
    /// The onDisconnect record the write consumes, if it runs one.
    public var session: String?
    public var position: Int64

    public init(epoch: String?, session: String? = nil, position: Int64 = 0) {
        (self.epoch, self.session, self.position) = (epoch, session, position)
    }
}
