import HearthStore

/// The statements that open and close a write batch's transaction, and what a batch whose
/// transaction failed can tell its writes (`commit` in PostgresEngine.swift).
extension PostgresEngine {
    /// The row lock that orders every node's write transactions, and the last number taken.
    static let orderingLockSQL = "UPDATE hearth_meta SET value = value WHERE key = 'last_seq' RETURNING value"

    /// The statements that open a write batch's transaction, in one exchange: BEGIN, the
    /// ordering lock (answering the last number) and the version of the list of query indexes.
    static let openingStatements: [PGConnection.Statement] = [
        .init(sql: "BEGIN"), .init(sql: orderingLockSQL), .init(sql: PostgresIndexMaintainer.versionSQL),
    ]

    /// The statement that ends a batch that wrote, sent with its COMMIT: the last number
    /// taken becomes `$5`, the node `$1`'s mark becomes the token `$2` at `$3`
    /// (`outcomeOfLostCommit`), and the feed's listeners on channel `$4` are woken with that
    /// number (delivered once it commits).
    static let markSQL = """
        WITH mark AS (
            INSERT INTO hearth_batches(node, token, at) VALUES ($1, $2, $3)
            ON CONFLICT (node) DO UPDATE SET token = excluded.token, at = excluded.at),
        seq AS (UPDATE hearth_meta SET value = $5 WHERE key = 'last_seq')
        SELECT pg_notify($4, $5::text)
        """

    /// `markSQL` with its values.
    static func mark(last: Int64, node: String, token: String, at time: Int64, channel: String) -> PGConnection.Statement {
        .init(sql: markSQL, params: [.text(node), .text(token), .int(time), .text(channel), .int(last)])
    }

    /// What a batch whose transaction failed can tell its writes (a pure decision,
    /// `LostCommitTests`).
    enum FailedBatch: Equatable {
        /// The COMMIT was never sent: nothing of the batch committed; "nothing was written".
        case notWritten
        /// The COMMIT was sent (whatever its answer, or none): the batch may have committed,
        /// and only its mark in `hearth_batches` can tell (`outcomeOfLostCommit`).
        case askTheMark

        /// `commitSent`: the COMMIT was handed to libpq and may have run (it may have reached
        /// the server even if libpq reported a failure; `commitMayHaveRun` when it went with
        /// other statements); `wrote`: the batch changed something (and marked itself).
        static func after(commitSent: Bool, wrote: Bool) -> FailedBatch {
            commitSent && wrote ? .askTheMark : .notWritten
        }

        /// Whether the COMMIT, sent last in one exchange with other statements (`runPipelined`),
        /// may have run: `answered` statements succeeded, the COMMIT is statement `commitAt`.
        /// It certainly did not only when the server refused one before it on a connection
        /// still up (`refusedByServer`: it runs none after a failed one). Otherwise (the
        /// connection dropped, the wait ran out) it may have reached the server and run.
        static func commitMayHaveRun(answered: Int, commitAt: Int, refusedByServer: Bool) -> Bool {
            answered >= commitAt || !refusedByServer
        }
    }

    /// What became of a batch whose COMMIT was sent but not answered (`outcomeOfLostCommit`).
    enum LostCommit: Equatable {
        case committed, notCommitted
        case unknown(String)

        /// The failure the batch's writes get; nil when it committed (they are acknowledged).
        var failure: WriteFailure? {
            switch self {
            case .committed:
                return nil
            case .notCommitted:
                return .store(.engine(EngineFailure(
                    engine: "postgres", code: "connection", kind: .unavailable,
                    message: "the commit was not answered, and the database says the batch did not commit; nothing was written",
                    operation: "commit")))
            case .unknown(let reason):
                return .outcomeUnknown(.engine(EngineFailure(
                    engine: "postgres", code: "connection", kind: .unavailable,
                    message: "the commit was not answered, and whether the batch committed is unknown (\(reason))",
                    operation: "commit")))
            }
        }
    }
}
