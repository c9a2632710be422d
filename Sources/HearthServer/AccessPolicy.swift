import HearthJSON
import HearthStore

/// Decides whether a request may read or write. The rules engine implements it; until it
/// lands the only implementation is the explicit development mode `OpenAccessPolicy`.
public protocol AccessPolicy: Sendable {
    /// Called on a reader, inside the read's transaction, before the value is read.
    func canRead(_ path: DataPath, view: any TreeView) throws -> Bool
    /// Called on the writer, inside the write's transaction, before it is applied.
    func canWrite(_ operation: WriteOperation, view: any TreeView) throws -> Bool
}

/// Everything allowed. Only reachable through `hearth serve --no-rules`, which logs a
/// warning on every start: there is no silent open mode.
public struct OpenAccessPolicy: AccessPolicy {
    public init() {}
    public func canRead(_ path: DataPath, view: any TreeView) throws -> Bool { true }
    public func canWrite(_ operation: WriteOperation, view: any TreeView) throws -> Bool { true }
}
