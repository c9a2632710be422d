import HearthJSON
import HearthRules
import HearthStore

/// Who is asking: the rules' `auth` variable (spec §3.3), `null` when unauthenticated.
public struct Caller: Sendable, Equatable {
    public var auth: JSONValue
    /// An operator's token (`hearth token --admin`): the rules are not consulted.
    public var isAdmin: Bool

    public init(auth: JSONValue, isAdmin: Bool = false) {
        self.auth = auth
        self.isAdmin = isAdmin
    }

    public static let unauthenticated = Caller(auth: .null)
}

/// Decides whether a request may read or write (DESIGN.md §3). The rules engine implements
/// it (`RulesAccessPolicy`); tests may supply their own.
public protocol AccessPolicy: Sendable {
    /// Called on a reader, inside the read's transaction, before the value is read.
    func canRead(_ path: DataPath, query: RuleQuery?, caller: Caller, view: any TreeView) -> Bool
    /// Called on the writer, inside the write's transaction, before it is applied: `view`
    /// is the writer's current state, so the check and the write see the same data.
    func canWrite(_ operation: WriteOperation, caller: Caller, view: any TreeView) -> Bool
}
