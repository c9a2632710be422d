import Dispatch
import HearthStore
import Synchronization

/// The store's connections lent to others (the account tables), its readiness and its
/// change log's reads.
extension SQLiteTreeStore {
    // MARK: Direct access for the account tables

    /// Runs `body` on the writer queue with the writer connection (blocking the caller).
    func onWriter<T>(_ body: (SQLiteConnection) throws -> T) throws -> T {
        try writerQueue.sync {
            guard let writer else { throw StoreError.closed }
            do {
                let result = try body(writer)
                if space.isFull { _ = space.readinessProblem() }
                return result
            } catch let error as StoreError where error.isDiskFull {
                space.noteRefused()
                throw error
            }
        }
    }

    /// Runs `body` on a reader (blocking the caller).
    func onReader<T>(_ body: (SQLiteConnection) throws -> T) throws -> T {
        try readers.sync { reader in
            guard let connection = reader.connection else { throw StoreError.closed }
            return try body(connection)
        }
    }

    // MARK: Readiness

    /// Whether the store takes writes: not after a failed sync of the WAL
    /// (`CommitSyncer.failure`), nor while writes are refused for lack of space and space
    /// has not come back (`DiskSpace.readinessProblem`); else a write transaction that
    /// opens and rolls back.
    public func checkWritable(completion: @escaping @Sendable (Result<Void, any Error>) -> Void) {
        writerQueue.async {
            if let refusal = self.syncer.failure {
                completion(.failure(refusal))
                return
            }
            if let problem = self.space.readinessProblem() {
                completion(.failure(problem))
                return
            }
            self.probeWritable(completion: completion)
        }
    }

    /// True while writes are refused for lack of space (until the readiness check sees
    /// space again).
    public var isStorageFull: Bool { space.isFull }

    // MARK: Change log

    /// Changes with `seq` greater than `after`, oldest first, at most `limit`; and the
    /// smallest seq the log still holds (so a caller can tell whether it missed some).
    public func changes(after: Int64, limit: Int) throws -> (changes: [Change], oldestSeq: Int64?) {
        // One read transaction: the oldest seq and the records come from one snapshot even
        // while the writer trims (a flaky test caught the two reads straddling a trim).
        try readSync { try $0.changes(after: after, limit: limit) }
    }
}
