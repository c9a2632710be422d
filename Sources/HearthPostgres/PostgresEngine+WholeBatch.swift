import HearthJSON
import HearthStore

/// A batch sent whole: when none of its writes needs to read the database before it is
/// applied (no check or server value that reads the tree, no fence, no trigger, no watched
/// location, no query index), everything the node has to do for it is done before the
/// transaction opens, and the transaction is one exchange: BEGIN, the ordering lock, the
/// check that the list of query indexes is still empty, the writes, the mark, the NOTIFY
/// and the COMMIT. The ordering lock is then held only while the server runs them, never
/// across a round trip to the node (see docs/scaling.md, "A batch in one round trip").
extension PostgresEngine {
    /// The statements that open a batch sent whole, before its writes: BEGIN, the ordering
    /// lock (answering the last number, the batch's base) and `unchanged`, which fails when
    /// the list of query indexes changed since the node last read it.
    static func wholeOpening(unchanged: PGConnection.Statement) -> [PGConnection.Statement] {
        [.init(sql: "BEGIN"), .init(sql: orderingLockSQL), unchanged]
    }

    /// Where the ordering lock's answer is in a batch sent whole, and the index check's.
    static let wholeLockAt = 1, wholeUnchangedAt = 2

    /// Checks and queues every write of `batch` on a new writer whose base is not known yet,
    /// without reading the database; nil when that cannot be done (a write would read, has
    /// effects, or does not fit one statement; the list of indexes is unknown or has one):
    /// the batch then takes the ordinary path, which judges it again from the start.
    /// `results` holds each write's provisional result (a refused write's failure).
    func prepareWhole(_ batch: [PendingWrites.Write], connection: PGConnection, time: Int64)
        -> (writer: PostgresTreeWriter, results: [Result<(Change, WriteOperation), WriteFailure>], unchanged: PGConnection.Statement)? {
        guard let unchanged = indexes.unchangedAndEmpty(), batch.count <= PostgresTreeWriter.maxWritesPerStatement,
              batch.allSatisfy({ $0.effects == nil }) else { return nil }
        let view = UnreadTreeView()
        let writer = PostgresTreeWriter(connection: connection, maxReplaced: options.maxNodesPerWrite, at: time, lastSeq: nil)
        var results: [Result<(Change, WriteOperation), WriteFailure>] = []
        results.reserveCapacity(batch.count)
        for (ticket, item) in batch.enumerated() {
            // With no effects and no index, a write that read nothing is only queued: no
            // watched location below it could be read, so none is left to send it at once.
            let result = applyOne(item, ticket: ticket, writer: writer, connection: connection, view: view, time: time)
            if view.wanted || writer.full { return nil }
            if case .failure(.store) = result { return nil }
            results.append(result)
        }
        return (writer, results, unchanged)
    }
}

/// The view a batch sent whole is judged on: it holds nothing and reads nothing. Any
/// question put to it marks it `wanted` and fails, and the batch then takes the ordinary
/// path (`PostgresEngine.prepareWhole`). Confined to the writer's queue.
final class UnreadTreeView: TreeView {
    private(set) var wanted = false

    private func refuse() -> StoreError {
        wanted = true
        return .engine(EngineFailure(engine: "postgres", code: "unread", kind: .other,
                                     message: "a write judged before its transaction asked to read the tree", operation: "read"))
    }

    func value(at path: DataPath) throws(StoreError) -> JSONValue { throw refuse() }
    func childKeys(at path: DataPath) throws(StoreError) -> [String] { throw refuse() }
    func leaf(at path: DataPath) throws(StoreError) -> JSONValue? { throw refuse() }
    func exists(at path: DataPath) throws(StoreError) -> Bool { throw refuse() }
    func lastChangeSeq() throws(StoreError) -> Int64 { throw refuse() }
    func changes(after seq: Int64, limit: Int) throws(StoreError) -> (changes: [Change], oldestSeq: Int64?) { throw refuse() }
    func query(_ query: TreeQuery, at path: DataPath) throws(StoreError) -> JSONValue { throw refuse() }
    func exportValue(at path: DataPath) throws(StoreError) -> JSONValue { throw refuse() }
    func renderedValue(at path: DataPath) throws(StoreError) -> [UInt8] { throw refuse() }
    func leafRows(at path: DataPath, after: String?, limit: Int) throws(StoreError) -> [(path: String, value: JSONValue)] { throw refuse() }
    func priority(at path: DataPath) throws(StoreError) -> JSONValue? { throw refuse() }
    func holds(_ fence: WriteFence) throws(StoreError) -> Bool { throw refuse() }
}
