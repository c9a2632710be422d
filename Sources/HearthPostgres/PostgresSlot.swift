import Dispatch
import HearthJSON
import HearthStore
import Synchronization

/// One connection and the queue it is confined to.
final class PostgresSlot: QueueConfined, @unchecked Sendable {  // `connection` is touched only on `queue`
    let queue: DispatchQueue
    private let url: String
    private var connection: PGConnection?
    private var closed = false

    private let idleInTransactionTimeout: Int

    init(url: String, label: String, idleInTransactionTimeout: Int = PGConnection.idleInTransactionTimeoutMilliseconds) throws(StoreError) {
        self.url = url
        self.queue = DispatchQueue(label: label)
        self.idleInTransactionTimeout = idleInTransactionTimeout
        self.connection = try PGConnection(url: url, idleInTransactionTimeout: idleInTransactionTimeout)
    }

    /// Runs `body` with the connection (on `queue`), reconnecting a dropped one first.
    func withConnection<T>(_ body: (PGConnection) throws -> T) throws -> T {
        if closed { throw StoreError.closed }
        if let connection, connection.isBrokenNow { connection.reset() }
        if connection == nil { connection = try PGConnection(url: url, idleInTransactionTimeout: idleInTransactionTimeout) }
        guard let connection else { throw StoreError.closed }
        if connection.isBroken {
            throw StoreError.engine(EngineFailure(engine: "postgres", code: "connection", kind: .unavailable,
                                                  message: "cannot reach the database: \(connection.errorMessage)", operation: "connect"))
        }
        return try body(connection)
    }

    func close() {
        queue.sync {
            closed = true
            connection = nil
        }
    }
}
