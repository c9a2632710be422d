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
