import HearthStore

/// Why the store does not take writes now, as a readiness check reports it: the
/// core classifies the store's failure so the transports only word it.
public struct NotReady: Error, Sendable {
    public enum Reason: Sendable, Equatable {
        /// The data volume is full (`DiskSpace`): writes are refused until space is freed.
        case storageFull
        /// The store is closed (the server is stopping).
        case closed
        /// The database cannot be reached.
        case unreachable
        /// Another process holds the database's lock.
        case locked
        /// Anything else.
        case other
    }

    public var reason: Reason
    /// The store's own text, for the log only (it may name the data directory).
    public var detail: String
    /// An outage the store's own log already reports once (closed, unreachable, locked): a
    /// prober logs it quietly rather than once per probe.
    public var isOutage: Bool

    /// Free space the store keeps beyond its reserve before it takes writes again.
    public static let reserveBytes = StorageEvent.reserveBytes

    /// Classifies a failed readiness check's error.
    public init(_ error: any Error) {
        detail = "\(error)"
        if case .unavailable = DatabaseError.from(error) { isOutage = true } else { isOutage = false }
        if let store = error as? StoreError, store.isDiskFull {
            reason = .storageFull
            return
        }
        var store = error as? StoreError
        switch error as? WriteFailure {
        case .store(let inner)?, .outcomeUnknown(let inner)?: store = inner
        default: break
        }
        switch store {
        case .closed?:
            reason = .closed
        case .engine(let failure)? where failure.kind == .unavailable:
            reason = .unreachable
        case .engine(let failure)? where failure.kind == .busy || failure.kind == .conflict:
            reason = .locked
        default:
            reason = .other
        }
    }
}

extension Database {
    /// Whether the store takes writes now (a write transaction opens on the writer, and
    /// space has come back after writes were refused for lack of it); `NotReady` says why not.
    public func checkWritable(completion: @escaping @Sendable (Result<Void, NotReady>) -> Void) {
        store.checkWritable { result in completion(result.mapError(NotReady.init)) }
    }
}
