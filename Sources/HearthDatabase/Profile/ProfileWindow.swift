import HearthJSON

/// The tables of one profiling window (`Profiler`), each bounded by `Profiler.Limits`.
/// Used under the profiler's lock only.
struct ProfileWindow {
    typealias Limits = Profiler.Limits

    struct Key: Hashable {
        let first: String
        let second: String
        let third: String
    }

    struct OperationRow {
        var count = 0
        var totalNanoseconds: Int64 = 0
        var bytesIn = 0
        var bytesOut = 0
        /// A uniform sample of the per-operation times (reservoir sampling).
        var samples: [Int64] = []
        var offered = 0

        /// Counts `count` operations taking `nanoseconds` in all; `slot` picks the sample
        /// an offer past the bound replaces (reservoir sampling), from a random number.
        mutating func add(count: Int, nanoseconds: Int64, bytesIn: Int, bytesOut: Int, random: UInt64) {
            self.count += count
            totalNanoseconds += nanoseconds
            self.bytesIn += bytesIn
            self.bytesOut += bytesOut
            offered += 1
            let perOperation = nanoseconds / Int64(count)
            if samples.count < Limits.samplesPerRow {
                samples.append(perOperation)
            } else {
                let slot = Int(random % UInt64(offered))
                if slot < Limits.samplesPerRow { samples[slot] = perOperation }
            }
        }
    }

    struct RuleRow {
        var count = 0
        var totalNanoseconds: Int64 = 0
    }

    let requestedSeconds: Int
    let startedAt: Int64
    let endsAt: UInt64
    private(set) var endedAt: Int64?
    private let patterns: @Sendable (DataPath) -> String
    private var operations: [Key: OperationRow] = [:]
    private var denials: [Key: Int] = [:]
    private var unindexedQueries: [Key: Int] = [:]
    private var rules: [String: RuleRow] = [:]
    private var slowest: [ProfileReport.Slow] = []
    /// The reservoir's random numbers (SplitMix64): no lock, no system call.
    private var seed: UInt64

    init(seconds: Int, startedAt: Int64, now: UInt64, patterns: @escaping @Sendable (DataPath) -> String) {
        requestedSeconds = seconds
        self.startedAt = startedAt
        endsAt = now + UInt64(seconds) * 1_000_000_000
        self.patterns = patterns
        seed = now | 1
    }

    func isRecording(at now: UInt64) -> Bool { endedAt == nil && now < endsAt }

    mutating func end(at now: UInt64, wallClock: Int64) {
        guard endedAt == nil else { return }
        // A window found past its end ended at its end, not when it was noticed.
        endedAt = now >= endsAt ? startedAt + Int64(requestedSeconds) * 1000 : wallClock
    }

    mutating func operation(_ kind: Profiler.Kind, at path: DataPath, nanoseconds: Int64, bytesIn: Int, bytesOut: Int, count: Int) {
        operation(kind, pattern: patterns(path), path: path, nanoseconds: nanoseconds, bytesIn: bytesIn, bytesOut: bytesOut, count: count)
    }

    /// `path`: the concrete path, for the slowest operations (nil: `pattern` is shown).
    mutating func operation(_ kind: Profiler.Kind, pattern: String, path: DataPath?, nanoseconds: Int64, bytesIn: Int, bytesOut: Int, count: Int) {
        let count = max(count, 1)
        var key = Key(first: kind.rawValue, second: pattern, third: "")
        if operations[key] == nil && operations.count >= Limits.maxPatterns + Self.otherRows(in: operations) {
            key = Key(first: kind.rawValue, second: Profiler.otherRow, third: "")
        }
        let perOperation = nanoseconds / Int64(count)
        // In place: a row copied out and back would copy its samples on every operation.
        operations[key, default: OperationRow()].add(count: count, nanoseconds: nanoseconds, bytesIn: bytesIn, bytesOut: bytesOut,
                                                     random: next())
        if slowestAccepts(perOperation) {
            slowest.append(ProfileReport.Slow(kind: kind.rawValue, path: path?.description ?? pattern, nanoseconds: perOperation))
            slowest.sort { $0.nanoseconds > $1.nanoseconds }
            if slowest.count > Limits.maxSlowest { slowest.removeLast() }
        }
    }

    /// Whether an operation of `nanoseconds` belongs among the slowest kept.
    func slowestAccepts(_ nanoseconds: Int64) -> Bool {
        slowest.count < Limits.maxSlowest || nanoseconds > slowest[slowest.count - 1].nanoseconds
    }

    /// The `(other)` rows already in `table`: they do not count against its bound.
    private static func otherRows<Value>(in table: [Key: Value]) -> Int {
        table.keys.reduce(0) { $0 + ($1.second == Profiler.otherRow ? 1 : 0) }
    }

    mutating func denial(_ operation: String, at path: DataPath, rule: String) {
        var key = Key(first: operation, second: rule, third: patterns(path))
        if denials[key] == nil && denials.count >= Limits.maxDenials + Self.otherRows(in: denials) {
            key = Key(first: operation, second: Profiler.otherRow, third: Profiler.otherRow)
        }
        denials[key, default: 0] += 1
    }

    mutating func unindexed(at path: DataPath, index: String) {
        var key = Key(first: patterns(path), second: index, third: "")
        if unindexedQueries[key] == nil && unindexedQueries.count >= Limits.maxUnindexed + (unindexedQueries[Self.otherUnindexed] == nil ? 0 : 1) {
            key = Self.otherUnindexed
        }
        unindexedQueries[key, default: 0] += 1
    }

    private static let otherUnindexed = Key(first: Profiler.otherRow, second: Profiler.otherRow, third: "")

    mutating func rule(_ location: String, nanoseconds: Int64) {
        var location = location
        if rules[location] == nil && rules.count >= Limits.maxRules + (rules[Profiler.otherRow] == nil ? 0 : 1) {
            location = Profiler.otherRow
        }
        rules[location, default: RuleRow()].count += 1
        rules[location]!.totalNanoseconds += nanoseconds
    }

    func operationSamples(_ key: Key) -> Int { operations[key]?.samples.count ?? 0 }

    private mutating func next() -> UInt64 {
        seed &+= 0x9E37_79B9_7F4A_7C15
        var z = seed
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    func report() -> ProfileReport {
        let operations = self.operations.map { key, row in
            let sorted = row.samples.sorted()
            return ProfileReport.Operation(
                kind: key.first, path: key.second, count: row.count,
                meanNanoseconds: row.totalNanoseconds / Int64(max(row.count, 1)),
                p50Nanoseconds: Self.percentile(50, of: sorted), p99Nanoseconds: Self.percentile(99, of: sorted),
                bytesIn: row.bytesIn, bytesOut: row.bytesOut)
        }.sorted { ($0.kind, $0.path) < ($1.kind, $1.path) }
        let denials = self.denials.map { ProfileReport.Denial(operation: $0.first, rule: $0.second, path: $0.third, count: $1) }
            .sorted { ($1.count, $0.operation, $0.rule, $0.path) < ($0.count, $1.operation, $1.rule, $1.path) }
        let unindexed = unindexedQueries.map { ProfileReport.Unindexed(path: $0.first, indexOn: $0.second, count: $1) }
            .sorted { ($1.count, $0.path, $0.indexOn) < ($0.count, $1.path, $1.indexOn) }
        let rules = self.rules.map { ProfileReport.Rule(rule: $0, count: $1.count, totalNanoseconds: $1.totalNanoseconds) }
            .sorted { ($1.totalNanoseconds, $0.rule) < ($0.totalNanoseconds, $1.rule) }
        return ProfileReport(startedAt: startedAt, endedAt: endedAt ?? startedAt, requestedSeconds: requestedSeconds,
                             operations: operations, denials: denials, unindexedQueries: unindexed, rules: rules, slowest: slowest)
    }

    /// The nearest-rank percentile of `sorted`; 0 when empty.
    static func percentile(_ p: Int, of sorted: [Int64]) -> Int64 {
        guard !sorted.isEmpty else { return 0 }
        let rank = (p * sorted.count + 99) / 100
        return sorted[min(max(rank, 1), sorted.count) - 1]
    }
}

extension ProfileWindow {
    /// How many times the row of `kind` at `pattern` keeps (tests: never over
    /// `Limits.samplesPerRow`).
    func sampleCount(_ kind: Profiler.Kind, _ pattern: String) -> Int {
        operationSamples(Key(first: kind.rawValue, second: pattern, third: ""))
    }
}
