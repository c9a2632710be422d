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
    /// `/.settings/rules.json`, when the rules come from a file.
    var rulesSettings: RulesSettings? = nil
    /// The body of `GET /metrics`, when metrics are on.
    var metricsText: (@Sendable () -> [UInt8])? = nil
    /// Rendered bodies of plain reads; whoever sets it must also invalidate it on every
    /// commit (`HearthService` does, in the store's `onCommit`).
    var readCache: ReadCache? = nil

    /// The rules gate for a write by `caller`, run by the writer inside the transaction
    /// (DESIGN.md §3). Operators' admin tokens bypass it.
    func writeCheck(for caller: Caller, ifMatch: String? = nil, options: QueryOptions = .defaults) -> WriteCheck? {
        if caller.isAdmin && ifMatch == nil { return nil }
        let policy = self.policy
        return { view, operation in
            if !caller.isAdmin {
                let access = policy.writeAccess(operation, caller: caller, view: view)
                guard access.allowed else { throw APIError.writeDenied(access.denial) }
            }
            // `if-match` (spec §1.4), on the same view the write is applied to.
            if let ifMatch, case .set(let entry) = operation {
                let current = try view.value(at: entry.path)
                let etag = ETag.of(current)
                if etag != ifMatch {
                    let readable = caller.isAdmin || policy.canRead(entry.path, query: nil, caller: caller, view: view)
                    throw PreconditionFailed(current: current, etag: etag, readable: readable, options: options)
                }
            }
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
        case .tooLarge(let reason):
            return .writeTooLarge(reason)
        }
    }

    func response(for error: any Error) -> APIError {
        if let api = error as? APIError { return api }
        if let store = error as? StoreError {
            if store.isBusy || store == .closed { return .unavailable }
            // Logged once per full episode by HearthService's storage observer.
            if store.isDiskFull { return .insufficientStorage }
            logger.error("store error: \(store)")
            return .internalError
        }
        logger.error("unexpected error: \(error)")
        return .internalError
    }
}
