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

    /// The statement that ends a batch that wrote, sent in one exchange with the batch's
    /// last writes and its COMMIT: the last number taken (the newest change, or the batch's
    /// base when none was logged) becomes the last number; the node `$1`'s mark becomes
    /// the token `$2` at `$3` with the base and that number (`outcomeOfLostCommit`); the
    /// feed's listeners on channel `$4` are woken with it (delivered once it commits). It
    /// answers that number. The base is `$5`, or when that is null (a batch sent whole, before
    /// it knew its base) the last number as the ordering lock found it. The last number is
    /// read back rather than sent, so the writes need not be answered first: under the
    /// ordering lock no other batch logs changes, so the newest is this batch's.
    static let markSQL = """
        WITH base AS (SELECT coalesce($5::bigint, (SELECT value FROM hearth_meta WHERE key = 'last_seq')) AS b),
        last AS (SELECT b, coalesce((SELECT max(seq) FROM changes WHERE seq > b), b) AS v FROM base),
        mark AS (
            INSERT INTO hearth_batches(node, token, at, base_seq, last_seq) SELECT $1, $2, $3, b, v FROM last
            ON CONFLICT (node) DO UPDATE SET token = excluded.token, at = excluded.at, base_seq = excluded.base_seq,
                                             last_seq = excluded.last_seq),
        seq AS (UPDATE hearth_meta SET value = (SELECT v FROM last) WHERE key = 'last_seq')
        SELECT v, pg_notify($4, v::text) FROM last
        """

    /// `markSQL` with its values: `base` is the last number before the batch (nil: read it).
    static func mark(after base: Int64?, node: String, token: String, at time: Int64, channel: String) -> PGConnection.Statement {
        .init(sql: markSQL, params: [.text(node), .text(token), .int(time), .text(channel), base.map { .int($0) } ?? .null])
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
        /// The batch committed; `last` is the last change number its mark recorded, `base`
        /// the number before its first (nil when unrecorded: a mark of an older node).
        case committed(last: Int64?, base: Int64? = nil)
        case notCommitted
        case unknown(String)

        /// The last change number of a batch that committed (nil otherwise, or unrecorded).
        var batchLast: Int64? {
            if case .committed(let last, _) = self { return last }
            return nil
        }

        /// The number before the first change of a batch that committed (nil otherwise, or
        /// unrecorded).
        var batchBase: Int64? {
            if case .committed(_, let base) = self { return base }
            return nil
        }

        /// What a write of a committed batch gets when its number cannot be told: it was
        /// sent with the COMMIT, the answer was lost, and the batch logged fewer numbers
        /// than it sent writes (one was too large), so whether this one was applied is unknown.
        static let committedUnnumbered = WriteFailure.outcomeUnknown(.engine(EngineFailure(
            engine: "postgres", code: "connection", kind: .unavailable,
            message: "the commit was not answered; the batch committed, but whether this write was applied is unknown",
            operation: "commit")))

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

    /// Gives each write of the batch its change number from `writer`'s outcomes (a write
    /// too large to apply fails instead), and returns the batch's last number.
    static func numbered(_ results: inout [Result<(Change, WriteOperation), WriteFailure>], by writer: PostgresTreeWriter,
                         limit: Int) -> Int64 {
        for (ticket, seq) in writer.outcomes {
            guard case .success((var change, let operation)) = results[ticket] else { continue }
            guard let seq else {
                results[ticket] = .failure(.tooLarge(.replaces(limit: limit)))
                continue
            }
            change.seq = seq
            results[ticket] = .success((change, operation))
        }
        return writer.lastSeq
    }
}
