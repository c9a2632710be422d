import HearthHTTP
import HearthJSON
import HearthStore
import HearthStreams
import Logging

/// What the RTDB endpoints need, passed in by the composition root (no globals).
struct RESTContext: Sendable {
    let store: any TreeStore
    let policy: any AccessPolicy
    let pushIDs: SharedPushIDGenerator
    let logger: Logger
    /// Accounts, tokens and the Identity Toolkit endpoints.
    let auth: AuthContext
    /// Live change streams.
    let streams: StreamHub

    /// The rules gate for a write by `caller`, run by the writer inside the transaction
    /// (DESIGN.md §3). Operators' admin tokens bypass it.
    func writeCheck(for caller: Caller) -> WriteCheck? {
        if caller.isAdmin { return nil }
        let policy = self.policy
        return { view, operation in
            guard policy.canWrite(operation, caller: caller, view: view) else { throw APIError.permissionDenied }
        }
    }

    /// Maps a store-side failure to what the client sees; the cause goes to the log only.
    func response(for failure: WriteFailure) -> APIError {
        switch failure {
        case .rejected(let error as APIError):
            return error
        case .rejected(let error):
            logger.error("write check failed: \(error)")
            return .internalError
        case .store(let error):
            return response(for: error)
        }
    }

    func response(for error: any Error) -> APIError {
        if let api = error as? APIError { return api }
        if let store = error as? StoreError {
            if store.isBusy || store == .closed { return .unavailable }
            logger.error("store error: \(store)")
            return .internalError
        }
        logger.error("unexpected error: \(error)")
        return .internalError
    }
}
