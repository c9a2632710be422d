import HearthJSON
import HearthRules
import HearthStore
import Logging
import Synchronization

/// The access policy of a rules file (docs/protocol/rules.md §3). The compiled rules can be
/// swapped at any time (`SIGHUP`); each decision uses one version from start to end.
///
/// With `recordsCoverage`, it decides with the rules compiled for coverage
/// (`RuleSet.withCoverage()`), so every decision — REST, streams, the wire protocol, listens
/// re-checked after a write — counts in `coverage`; replacing the rules starts the counts
/// afresh.
public final class RulesAccessPolicy: AccessPolicy {
    private let current: Mutex<Versions>
    private let clock: @Sendable () -> Int64
    private let logger: Logger?
    public let recordsCoverage: Bool
    /// Told of denials and rule timings while it records.
    private let profiler: Profiler?

    /// The rules as loaded, and the ones decisions use (the same, or compiled with
    /// coverage).
    private struct Versions {
        let loaded: RuleSet
        let deciding: RuleSet
        /// Why coverage is not recorded although asked for (too many sites).
        let coverageRefusal: String?
    }

    public init(rules: RuleSet, clock: @escaping @Sendable () -> Int64 = WallClock.milliseconds, logger: Logger? = nil,
                recordsCoverage: Bool = false, profiler: Profiler? = nil) {
        self.recordsCoverage = recordsCoverage
        self.profiler = profiler
        self.current = Mutex(Self.versions(rules, recordsCoverage: recordsCoverage, logger: logger))
        self.clock = clock
        self.logger = logger
    }

    private static func versions(_ rules: RuleSet, recordsCoverage: Bool, logger: Logger?) -> Versions {
        guard recordsCoverage else { return Versions(loaded: rules, deciding: rules, coverageRefusal: nil) }
        do {
            return Versions(loaded: rules, deciding: try rules.withCoverage(), coverageRefusal: nil)
        } catch {
            logger?.warning("rules coverage is not recorded for these rules: \(error)")
            return Versions(loaded: rules, deciding: rules, coverageRefusal: error.description)
        }
    }

    /// The rules as loaded (without coverage probes).
    public var rules: RuleSet { current.withLock { $0.loaded } }

    /// The rules decisions are made with.
    private var deciding: RuleSet { current.withLock { $0.deciding } }

    /// The running rules' coverage: nil when not recording (`recordsCoverage` off, or the
    /// rules have too many sites: `coverageRefusal`).
    public var coverage: RuleCoverage? { deciding.coverage }

    /// Why coverage is not recorded for the running rules although `recordsCoverage` is on.
    public var coverageRefusal: String? { current.withLock { $0.coverageRefusal } }

    /// Replaces the rules atomically; requests already deciding keep the old ones. Coverage
    /// counts start afresh.
    public func replace(_ rules: RuleSet) {
        let versions = Self.versions(rules, recordsCoverage: recordsCoverage, logger: logger)
        current.withLock { $0 = versions }
    }

    public func canRead(_ path: DataPath, query: RuleQuery?, caller: Caller, view: any TreeView) -> Bool {
        readAccess(path, query: query, caller: caller, view: view).allowed
    }

    public func pattern(of path: DataPath) -> String {
        rules.pattern(of: path)
    }

    public func indexes(at path: DataPath) -> [String] {
        rules.indexes(at: path)
    }

    /// Counts a query ordered by `index` at `path` for the `.indexOn` entry declared there
    /// (coverage only).
    public func queried(index: String, at path: DataPath) {
        deciding.recordIndexUse(index, at: path)
    }

    public func readAccess(_ path: DataPath, query: RuleQuery?, caller: Caller, view: any TreeView) -> ReadAccess {
        let times = profiler?.isRecording == true ? RuleTimes() : nil
        let decision = deciding.canRead(path, data: StoreRuleSource(view: view), auth: caller.auth, now: clock(), query: query, timing: times)
        if let times { profiled(decision, of: "read", at: path, times) }
        if !decision.allowed { logger?.debug("denied: \(decision.explanation.last ?? "")") }
        return ReadAccess(allowed: decision.allowed, dependsOnDataOrTime: decision.dependsOnDataOrTime)
    }

    public func readAllowedWithoutData(_ path: DataPath, caller: Caller) -> Bool {
        deciding.readAllowedWithoutData(path, auth: caller.auth, now: clock())
    }

    public func canWrite(_ operation: WriteOperation, caller: Caller, view: any TreeView) -> Bool {
        writeAccess(operation, caller: caller, view: view).allowed
    }

    /// `operation`'s entries as the rules take them: without priorities (`getPriority()`
    /// is null; rules.md).
    private static func ruleWrites(_ operation: WriteOperation) -> [(path: DataPath, value: JSONValue?)] {
        operation.entries.map { (path: $0.path, value: $0.value.map(FirebaseTree.withoutPriorities)) }
    }

    public func writeAccessWithoutData(_ operation: WriteOperation, caller: Caller) -> WriteAccess? {
        guard let decision = deciding.canWriteWithoutData(Self.ruleWrites(operation), auth: caller.auth, timing: profiler?.timing) else {
            return nil
        }
        // A denial here is decided again on the writer, and counted there.
        return WriteAccess(allowed: decision.allowed, denial: decision.denial)
    }

    public func writeAccess(_ operation: WriteOperation, caller: Caller, view: any TreeView) -> WriteAccess {
        let times = profiler?.isRecording == true ? RuleTimes() : nil
        let decision = deciding.canWrite(Self.ruleWrites(operation), data: StoreRuleSource(view: view), auth: caller.auth, now: clock(),
                                         timing: times)
        if let times {
            var path = operation.entries.first?.path ?? .root
            if case .update(let base, _) = operation { path = base }
            if case .validationFailed(_, let failed, _)? = decision.denial { path = failed }
            profiled(decision, of: "write", at: path, times)
        }
        switch decision.denial {
        case nil:
            break
        case .validationFailed?, .limitExceeded?:
            // What a developer needs to fix a rejected write, at info (docs/rules.md).
            logger?.info("write denied: \(decision.explanation.last ?? "")")
        case .notGranted?, .aborted?:
            logger?.debug("denied: \(decision.explanation.last ?? "")")
        }
        return WriteAccess(allowed: decision.allowed, denial: decision.denial)
    }
}

extension RulesAccessPolicy {
    /// Tells the profiler the rules `decision` evaluated and, when it denied `operation`
    /// (`read`, `write`) at `path`, the rule that denied.
    private func profiled(_ decision: RuleDecision, of operation: String, at path: DataPath, _ times: RuleTimes) {
        guard let profiler else { return }
        let evaluated = times.all
        profiler.rulesEvaluated(evaluated)
        if !decision.allowed { profiler.denied(operation, at: path, rule: Self.denyingRule(decision.denial, of: operation, evaluated)) }
    }

    /// A denial as the profiler names it: the failed `.validate` rule's location; for a
    /// missing grant, the last `.read` / `.write` rule evaluated on the path (false), or
    /// `no rule granted` when the path has none; or what stopped the decision.
    static func denyingRule(_ denial: RuleDenial?, of operation: String, _ evaluated: [RuleTime]) -> String {
        switch denial {
        case .validationFailed(let rule, _, _)?: return rule
        case .limitExceeded(.evaluationSteps, _)?: return "evaluation budget exceeded"
        case .limitExceeded(.validatedNodes, _)?: return "too many nodes to validate"
        case .aborted?: return "aborted"
        case .notGranted?, nil:
            let suffix = "/." + operation
            return evaluated.last { !$0.result && $0.location.hasSuffix(suffix) }?.location ?? "no rule granted"
        }
    }
}

/// The rules one decision evaluated, for the profiler (a decision runs on one thread; the
/// lock makes the type `Sendable`, as `RuleTiming` asks, and is never contended).
final class RuleTimes: RuleTiming {
    private let list = Mutex<[RuleTime]>([])

    func rulesEvaluated(_ timings: [RuleTime]) {
        list.withLock { $0 += timings }
    }

    var all: [RuleTime] { list.withLock { $0 } }
}

/// The store's view of the data, as the rules read it (`data`, `root`; `newData` is an
/// overlay over it built by the rules engine).
public struct StoreRuleSource: RuleDataSource {
    let view: any TreeView

    public init(view: any TreeView) { self.view = view }

    public func leaf(at path: DataPath) throws -> JSONValue? { try view.leaf(at: path) }
    public func childKeys(at path: DataPath) throws -> [String] { try view.childKeys(at: path) }
    public func exists(at path: DataPath) throws -> Bool { try view.exists(at: path) }
}
