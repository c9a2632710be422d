/// A snapshot of a server's counters, for `/metrics`.
public struct HTTPServerStats: Sendable, Equatable {
    /// Connections currently open (accepted and not yet closed).
    public var openConnections: Int
    /// Connections accepted since start, including those refused with 503.
    public var acceptedConnections: Int
    /// Connections refused with 503 because `maxConnections` was reached.
    public var rejectedConnections: Int
    /// Requests handed to the handler since start (malformed ones are not counted).
    public var totalRequests: Int
    /// Malformed requests answered with an error status by the HTTP layer itself.
    public var malformedRequests: Int
    /// Open-ended bodies (event streams) currently open.
    public var openStreams: Int
    /// Streams ended because their reader fell more than the buffer bound behind.
    public var streamOverflows: Int
    /// Connections upgraded to WebSocket sessions and still open.
    public var openWebSockets: Int
    /// Response bytes waiting unsent in the server's buffers now, with what the application
    /// holds for clients in the same ledger (`UnsentBytes`: long-poll answers waiting for a
    /// poll); `maxUnsentBytes` bounds it.
    public var unsentBytes: Int
    /// Responses answered 503, and streams ended, because `maxUnsentBytes` was reached; with
    /// the holds the application was refused in the same ledger (`UnsentBytes.hold`: a
    /// long-poll session ended).
    public var unsentRefusals: Int
    /// Connections refused with 429 because their address had `maxConnectionsPerAddress`.
    public var addressRefusals: Int
    /// Bytes held now for requests and messages not complete yet (`maxIncompleteBytes`
    /// bounds it).
    public var incompleteBytes: Int
    /// Requests and WebSocket sessions refused because `maxIncompleteBytes` or
    /// `maxIncompleteBytesPerAddress` was reached, or a message stayed incomplete past
    /// `WebSocketLimits.partialMessageTimeout`.
    public var incompleteRefusals: Int
    /// Times a WebSocket session stopped reading from its peer because the application had
    /// too many whole messages waiting (`WebSocketSession.waiting`).
    public var readPauses: Int
    /// Send syscalls that carried open-stream output (events, WebSocket frames): below the
    /// events queued when a loop's batch (`IOLoop.post`) gathered several for one connection.
    public var streamWrites: Int
    /// Of those sends, the ones that went through a loop's io_uring ring (a push's fan-out).
    public var ringSends: Int

    public init(openConnections: Int = 0, acceptedConnections: Int = 0, rejectedConnections: Int = 0,
                totalRequests: Int = 0, malformedRequests: Int = 0, openStreams: Int = 0, streamOverflows: Int = 0,
                openWebSockets: Int = 0, unsentBytes: Int = 0, unsentRefusals: Int = 0, addressRefusals: Int = 0,
                incompleteBytes: Int = 0, incompleteRefusals: Int = 0, readPauses: Int = 0, streamWrites: Int = 0,
                ringSends: Int = 0) {
        self.readPauses = readPauses
        self.streamWrites = streamWrites
        self.ringSends = ringSends
        self.incompleteBytes = incompleteBytes
        self.incompleteRefusals = incompleteRefusals
        self.openWebSockets = openWebSockets
        self.unsentBytes = unsentBytes
        self.unsentRefusals = unsentRefusals
        self.addressRefusals = addressRefusals
        self.openStreams = openStreams
        self.streamOverflows = streamOverflows
        self.openConnections = openConnections
        self.acceptedConnections = acceptedConnections
        self.rejectedConnections = rejectedConnections
        self.totalRequests = totalRequests
        self.malformedRequests = malformedRequests
    }
}
