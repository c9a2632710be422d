import HearthJSON
import HearthRules
import HearthStore

/// Why a database operation did not happen, as every transport needs to know it. The
/// adapters turn it into their own shape: an HTTP status and `{"error":…}` for REST, a
/// status string (`permission_denied`, `datastale`, …) for the wire protocol. No HTTP
/// status appears here.
public enum DatabaseError: Error, Sendable {
    /// The rules refused (`nil` denial: a missing grant); nothing was read or written.
    case permissionDenied(RuleDenial?)
    /// A compare-and-set whose tag no longer matches the current value (REST `if-match`,
    /// wire-protocol transactions). `current` is the value now stored at the path and
    /// `tag` its tag. Only ever for a caller who may read the path: on any other the
    /// compare-and-set is `permissionDenied` before anything is compared.
    case stale(current: JSONValue, tag: String)
    /// The write is over `StoreOptions.maxNodesPerWrite`.
    case tooLarge(TooLarge)
    /// The write's server values resolved to a value the tree cannot hold (an increment
    /// past the largest double), found when it was applied; nothing was written. The
    /// error says where, for the client.
    case invalidValue(TreeError)
    /// The write would cause more than `limit` trigger events
    /// (`TriggerLimits.maxEventsPerWrite`); nothing was written.
    case tooManyTriggerEvents(limit: Int)
    /// The data volume is full (`DiskSpace`): nothing was written.
    case storageFull
    /// The store is closed, locked by another process or cannot be reached, or this node
    /// does not hold its lease on a shared store: the operation was not carried out (a
    /// write: nothing was written). Try again later. `cause` says which, for the log only,
    /// never for a client.
    case unavailable(cause: String)
    /// The store could not be reached after a write's COMMIT was sent, nor asked afterwards
    /// whether it committed: the write may have been written (`WriteFailure.outcomeUnknown`).
    /// `cause` says why, for the log only, never for a client.
    case outcomeUnknown(cause: String)
    /// The cap on open listens (`StreamOptions.maxStreams`) is reached.
    case tooManyListens
    /// The cap on open listens from one client address is reached.
    case tooManyListensFromAddress
    /// Anything else; `reason` is for the log only, never for a client.
    case internalError(reason: String)

    /// Maps a store-side error; anything unexpected becomes `.internalError`.
    public static func from(_ error: any Error) -> DatabaseError {
        switch error {
        case let database as DatabaseError:
            return database
        case let store as StoreError:
            if store.isBusy || store.isConflict || store == .closed { return .unavailable(cause: "\(store)") }
            if case .engine(let failure) = store, failure.kind == .unavailable { return .unavailable(cause: "\(store)") }
            if store.isDiskFull { return .storageFull }
            return .internalError(reason: "store error: \(store)")
        case let tree as TreeError:
            return .invalidValue(tree)
        case let failure as WriteFailure:
            switch failure {
            case .store(let store): return from(store)
            case .outcomeUnknown(let store): return .outcomeUnknown(cause: "\(store)")
            case .tooLarge(let reason): return .tooLarge(TooLarge(reason))
            case .rejected(let inner): return from(inner)
            }
        default:
            return .internalError(reason: "unexpected error: \(error)")
        }
    }
}

extension DatabaseError {
    /// Which limit of a write's size was crossed (the store's `maxNodesPerWrite`).
    public enum TooLarge: Sendable, Equatable {
        /// The data written has more than `limit` nodes.
        case writes(limit: Int)
        /// The write would replace or delete more than `limit` stored nodes.
        case replaces(limit: Int)

        init(_ reason: WriteTooLarge) {
            switch reason {
            case .writes(let limit): self = .writes(limit: limit)
            case .replaces(let limit): self = .replaces(limit: limit)
            }
        }
    }
}
