import HearthStore

/// The statements that open and close a write batch's transaction, and what a batch whose
/// transaction failed can tell its writes (`commit` in PostgresEngine.swift).
extension PostgresEngine {
    /// The row lock that orders every node's write transactions, and the last number taken.
    static let orderingLockSQL = "UPDATE hearth_meta SET value = value WHERE key = 'last_seq' RETURNING value"

    /// The statement that ends a batch that wrote, sent with its COMMIT: `last` becomes the
    /// last number taken, the node's mark becomes `token` (`outcomeOfLostCommit`), and the
    /// feed's listeners are woken (delivered once it commits). Values are written into the
    /// text (it goes with the simple protocol, which takes no parameters): integers, the
    /// checked channel, and ids refused unless made of letters, digits and `-`.
    static func markSQL(last: Int64, node: String, token: String, at time: Int64, channel: String) throws(StoreError) -> String {
        for id in [node, token] where !isPlainID(id) {
            throw .corrupt("a batch mark's id is not letters, digits and '-': \(id)")
        }
        try PGConnection.validate(channel: channel)
        return """
            WITH mark AS (
                INSERT INTO hearth_batches(node, token, at) VALUES ('\(node)', '\(token)', \(time))
                ON CONFLICT (node) DO UPDATE SET token = excluded.token, at = excluded.at),
            seq AS (UPDATE hearth_meta SET value = \(last) WHERE key = 'last_seq')
            SELECT pg_notify('\(channel)', '\(last)')
            """
    }

    /// Whether `id` is non-empty ASCII letters, digits and `-` (what `randomID` makes):
    /// safe to write between quotes into SQL text.
    static func isPlainID(_ id: String) -> Bool {
        !id.isEmpty && id.utf8.allSatisfy { byte in
            byte == UInt8(ascii: "-") || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
                || (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
        }
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

        /// Whether the COMMIT, sent last in one exchange with other statements (`runEach`),
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
