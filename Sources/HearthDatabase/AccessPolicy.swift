import HearthJSON
import HearthRules
import HearthStore

/// Who is asking: the rules' `auth` variable (docs/protocol/rules.md §3.3), `null` when
/// unauthenticated.
public struct Caller: Sendable, Equatable {
    public var auth: JSONValue
    /// An operator's token (`hearth token --admin`): the rules are not consulted.
    public var isAdmin: Bool

    public init(auth: JSONValue, isAdmin: Bool = false) {
        self.auth = auth
        self.isAdmin = isAdmin
    }

    public static let unauthenticated = Caller(auth: .null)

    /// The user and the time their ID token was issued, from the rules' `auth` (whose
    /// `token` holds the token's claims); nil for a caller without both (an operator, the
    /// unauthenticated, a custom `auth`).
    public var signedInAs: (uid: String, issuedAt: Int64)? {
        guard case .string(let uid)? = auth.objectValue?["uid"],
              case .int(let issuedAt)? = auth.objectValue?["token"]?.objectValue?["iat"] else { return nil }
        return (uid, issuedAt)
    }
}

/// A read decision and whether it could change with the data.
public struct ReadAccess: Sendable, Equatable {
    public var allowed: Bool
    /// True when the decision looked at data or the clock (see `RuleDecision`).
    public var dependsOnDataOrTime: Bool

    public init(allowed: Bool, dependsOnDataOrTime: Bool) {
        self.allowed = allowed
        self.dependsOnDataOrTime = dependsOnDataOrTime
    }
}

/// A write decision and, when denied, why (for the error the client gets).
public struct WriteAccess: Sendable, Equatable {
    public var allowed: Bool
    /// Nil when allowed.
    public var denial: RuleDenial?

    public init(allowed: Bool, denial: RuleDenial? = nil) {
        self.allowed = allowed
        self.denial = allowed ? nil : (denial ?? .notGranted)
    }
}

/// Decides whether a request may read or write (docs/design.md §3). The rules engine
/// implements it (`RulesAccessPolicy`); tests may supply their own.
public protocol AccessPolicy: Sendable {
    /// Called on a reader, inside the read's transaction, before the value is read.
    func canRead(_ path: DataPath, query: RuleQuery?, caller: Caller, view: any TreeView) -> Bool
    /// Called on the writer, inside the write's transaction, before it is applied: `view`
    /// is the writer's current state, so the check and the write see the same data.
    func canWrite(_ operation: WriteOperation, caller: Caller, view: any TreeView) -> Bool
    /// `canWrite`, also saying why a denied write was denied. The writer calls this one.
    func writeAccess(_ operation: WriteOperation, caller: Caller, view: any TreeView) -> WriteAccess
    /// `canRead`, also saying whether the answer could change with the data (streams
    /// re-check only those that could).
    func readAccess(_ path: DataPath, query: RuleQuery?, caller: Caller, view: any TreeView) -> ReadAccess
    /// The `.indexOn` entries declared for `path` (docs/protocol/rest.md §1.3: queries
    /// ordered by a child or by value need one).
    func indexes(at path: DataPath) -> [String]
    /// A query at `path` ordered by `index` (a child path or `.value`) was asked for,
    /// whether or not `indexes(at:)` declares it: rules coverage counts it.
    func queried(index: String, at path: DataPath)
    /// True when a plain read of `path` (no query) is allowed by a decision that looked at
    /// neither data nor the clock, so it holds whatever the data: the read cache may answer
    /// it without a read transaction. False means "ask `canRead` with a view".
    func readAllowedWithoutData(_ path: DataPath, caller: Caller) -> Bool
    /// The decision on `operation` (server values already resolved, or none) when it
    /// holds whatever the data and the time, so it can be made before the write queues for
    /// the writer; nil means "ask `writeAccess` with the writer's view".
    func writeAccessWithoutData(_ operation: WriteOperation, caller: Caller) -> WriteAccess?
    /// `path` with its keys collapsed by the rules' wildcards (`RuleSet.pattern(of:)`), for
    /// the profiler's tables.
    func pattern(of path: DataPath) -> String
}

extension AccessPolicy {
    /// Without more knowledge, every write is decided on the writer.
    public func writeAccessWithoutData(_ operation: WriteOperation, caller: Caller) -> WriteAccess? {
        nil
    }

    /// Without more knowledge, a denial is a missing grant.
    public func writeAccess(_ operation: WriteOperation, caller: Caller, view: any TreeView) -> WriteAccess {
        WriteAccess(allowed: canWrite(operation, caller: caller, view: view))
    }

    /// Without rules, every path is its own pattern.
    public func pattern(of path: DataPath) -> String { path.description }

    /// No declared indexes.
    public func indexes(at path: DataPath) -> [String] { [] }

    /// Nothing recorded.
    public func queried(index: String, at path: DataPath) {}

    /// Without more knowledge, every read needs the data.
    public func readAllowedWithoutData(_ path: DataPath, caller: Caller) -> Bool { false }

    /// Without more knowledge, every decision may depend on the data.
    public func readAccess(_ path: DataPath, query: RuleQuery?, caller: Caller, view: any TreeView) -> ReadAccess {
        ReadAccess(allowed: canRead(path, query: query, caller: caller, view: view), dependsOnDataOrTime: true)
    }
}
