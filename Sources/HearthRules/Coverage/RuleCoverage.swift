import Synchronization

/// What one evaluation of a coverage site produced: `true`/`false` for booleans, `error`
/// when it failed at run time, the value kind otherwise. `used` is the one result of an
/// `.indexOn` entry: a query ordered by that entry ran where it is declared.
public enum CoverageResult: Int, Sendable, CaseIterable {
    case `true`, `false`, error, null, number, string, object, snapshot, used

    /// The name used in reports (`coverage.json`).
    public var name: String {
        switch self {
        case .true: return "true"
        case .false: return "false"
        case .error: return "error"
        case .null: return "null"
        case .number: return "number"
        case .string: return "string"
        case .object: return "object"
        case .snapshot: return "snapshot"
        case .used: return "used"
        }
    }

    init(_ value: RuntimeValue) {
        switch value {
        case .bool(let flag): self = flag ? .true : .false
        case .null: self = .null
        case .number: self = .number
        case .string: self = .string
        case .nonLeaf, .json: self = .object
        case .snapshot: self = .snapshot
        }
    }
}

/// The kind of rule a coverage site belongs to.
public enum CoverageRuleKind: String, Sendable, CaseIterable {
    case read = ".read"
    case write = ".write"
    case validate = ".validate"
    case indexOn = ".indexOn"
}

/// One place in the rules file whose evaluations are counted: a whole rule (a constant
/// `true`/`false` or an expression), one sub-expression the author wrote, or one `.indexOn`
/// entry.
public struct CoverageSite: Sendable, Hashable {
    /// The rule's location, e.g. `/rules/users/$uid/.write`.
    public let rule: String
    public let kind: CoverageRuleKind
    /// Byte offsets `start..<end` in the rules file; within the expression text when the
    /// rules were compiled from parsed JSON (then `line` is 0).
    public let start: Int
    public let end: Int
    /// 1-based line and column (Unicode scalars) of `start`; both 0 without a file.
    public let line: Int
    public let column: Int
    /// The whole rule's decoded text (shared by its sites, not copied) and this site's
    /// byte range in it.
    let expression: String
    let written: Range<Int>
    /// True for the site that is the whole rule (or the `.indexOn` entry).
    public let isWholeRule: Bool
    /// Statically a boolean: fully covered once it was both true and false.
    public let isBoolean: Bool

    /// The expression as the author wrote it (decoded from the JSON string).
    public var text: String {
        let bytes = expression.utf8
        let from = bytes.index(bytes.startIndex, offsetBy: written.lowerBound, limitedBy: bytes.endIndex) ?? bytes.endIndex
        let to = bytes.index(from, offsetBy: written.count, limitedBy: bytes.endIndex) ?? bytes.endIndex
        return String(decoding: bytes[from..<to], as: UTF8.self)
    }

    /// The data path pattern the rule sits at, e.g. `/users/$uid` (`/` for the root).
    public var path: String {
        var parts = rule.split(separator: "/", omittingEmptySubsequences: false).dropFirst(2)
        parts = parts.dropLast()
        return "/" + parts.joined(separator: "/")
    }
}

/// How much of a site was exercised, for colouring reports.
public enum CoverageLevel: String, Sendable {
    /// Never evaluated.
    case none
    /// Evaluated, but a boolean only ever one way.
    case partial
    /// Evaluated, and a boolean both true and false.
    case full
}

/// The coverage sites of a probed rule set and their counts by result. Every decision of
/// that rule set adds to it, from any thread; counts saturate at `UInt32.max`.
public final class RuleCoverage: Sendable {
    public let sites: [CoverageSite]
    /// The rules file the offsets point into; nil when compiled from parsed JSON.
    public let sourceText: String?
    private static let resultCount = CoverageResult.allCases.count
    private let state: Mutex<State>

    private struct State {
        var counts: [UInt32]
        var flushes = 0
    }

    init(sites: [CoverageSite], sourceText: String?) {
        self.sites = sites
        self.sourceText = sourceText
        self.state = Mutex(State(counts: Array(repeating: 0, count: sites.count * Self.resultCount)))
    }

    static func hit(_ site: Int, _ result: CoverageResult) -> Int {
        site * resultCount + result.rawValue
    }

    /// Adds a batch of hits (`hit(_:_:)` codes): one lock per batch.
    func add(_ hits: [Int]) {
        state.withLock { state in
            state.flushes += 1
            for hit in hits where hit < state.counts.count {
                let (sum, overflow) = state.counts[hit].addingReportingOverflow(1)
                state.counts[hit] = overflow ? .max : sum
            }
        }
    }

    /// How many batches were added (a decision adds one, more when it overflows its
    /// buffer: `PendingHits.maxPendingHits`).
    var flushCount: Int { state.withLock { $0.flushes } }

    /// The counts of every site, by result: `counts()[site][result.rawValue]`.
    public func counts() -> [[UInt32]] {
        let flat = state.withLock { $0.counts }
        return sites.indices.map { Array(flat[($0 * Self.resultCount)..<(($0 + 1) * Self.resultCount)]) }
    }

    public static func level(of site: CoverageSite, counts: [UInt32]) -> CoverageLevel {
        let total = counts.reduce(UInt64(0)) { $0 + UInt64($1) }
        if total == 0 { return .none }
        if !site.isBoolean { return .full }
        return counts[CoverageResult.true.rawValue] > 0 && counts[CoverageResult.false.rawValue] > 0 ? .full : .partial
    }
}

/// The hits of one decision, added to the shared counts once when the decision ends (its
/// `DecisionContext` goes away), or early when `maxPendingHits` are waiting, so one huge
/// decision holds a bounded buffer. Never shared between threads.
///
/// A `deferred` buffer belongs to a decision its caller may throw away (one made without
/// the data, `canWriteWithoutData`): it is never flushed early, `discard()` drops it, and
/// past `maxPendingHits` it stops recording and says `overflowed`, so the caller throws the
/// decision away and decides again (counted then).
final class PendingHits {
    /// Hits held before an early flush.
    static let maxPendingHits = 4096
    let coverage: RuleCoverage
    let deferred: Bool
    private(set) var overflowed = false
    private var hits: [Int] = []

    /// Room reserved up front: a typical decision's hits without regrowing the buffer.
    static let initialCapacity = 64

    init(_ coverage: RuleCoverage, deferred: Bool = false) {
        self.coverage = coverage
        self.deferred = deferred
        hits.reserveCapacity(Self.initialCapacity)
    }

    func record(_ site: Int, _ result: CoverageResult) {
        guard !overflowed else { return }
        hits.append(RuleCoverage.hit(site, result))
        guard hits.count >= Self.maxPendingHits else { return }
        if deferred {
            overflowed = true
            hits.removeAll()
        } else {
            flush()
        }
    }

    /// Drops the hits held (the decision is not used).
    func discard() {
        hits.removeAll()
    }

    func flush() {
        guard !hits.isEmpty else { return }
        coverage.add(hits)
        hits.removeAll(keepingCapacity: true)
    }

    deinit { flush() }
}
