import HearthJSON

/// What a profiling window recorded (`Profiler.stop`), sorted for reading: operations by
/// kind and path pattern, denials, unindexed queries and rules by count or time, the
/// slowest operations slowest first. `json` is the documented shape (docs/profiling.md).
public struct ProfileReport: Sendable, Equatable {
    public struct Operation: Sendable, Equatable {
        public let kind: String
        public let path: String
        public let count: Int
        public let meanNanoseconds: Int64
        public let p50Nanoseconds: Int64
        public let p99Nanoseconds: Int64
        public let bytesIn: Int
        public let bytesOut: Int
    }

    public struct Denial: Sendable, Equatable {
        /// `read` or `write`.
        public let operation: String
        /// The denying rule's location, `no rule granted`, or what stopped the decision.
        public let rule: String
        public let path: String
        public let count: Int
    }

    public struct Unindexed: Sendable, Equatable {
        public let path: String
        /// The `.indexOn` entry that would serve the query (a child path, or `.value`).
        public let indexOn: String
        public let count: Int
    }

    public struct Rule: Sendable, Equatable {
        public let rule: String
        public let count: Int
        public let totalNanoseconds: Int64
    }

    public struct Slow: Sendable, Equatable {
        public let kind: String
        /// The concrete path (not its pattern).
        public let path: String
        public let nanoseconds: Int64
    }

    /// Milliseconds since the epoch.
    public let startedAt: Int64
    public let endedAt: Int64
    public let requestedSeconds: Int
    public let operations: [Operation]
    public let denials: [Denial]
    public let unindexedQueries: [Unindexed]
    public let rules: [Rule]
    public let slowest: [Slow]

    /// The operations row of `kind` at `path`, if any.
    public func operation(_ kind: Profiler.Kind, _ path: String) -> Operation? {
        operations.first { $0.kind == kind.rawValue && $0.path == path }
    }

    /// The report as JSON (docs/profiling.md), times in milliseconds.
    public var json: JSONValue {
        .object([
            "startedAt": .int(startedAt),
            "endedAt": .int(endedAt),
            "requestedSeconds": .int(Int64(requestedSeconds)),
            "operations": .array(operations.map { row in
                .object([
                    "kind": .string(row.kind), "path": .string(row.path), "count": .int(Int64(row.count)),
                    "meanMs": Self.milliseconds(row.meanNanoseconds), "p50Ms": Self.milliseconds(row.p50Nanoseconds),
                    "p99Ms": Self.milliseconds(row.p99Nanoseconds),
                    "bytesIn": .int(Int64(row.bytesIn)), "bytesOut": .int(Int64(row.bytesOut)),
                ])
            }),
            "denials": .array(denials.map {
                .object(["operation": .string($0.operation), "rule": .string($0.rule), "path": .string($0.path), "count": .int(Int64($0.count))])
            }),
            "unindexedQueries": .array(unindexedQueries.map {
                .object(["path": .string($0.path), "indexOn": .string($0.indexOn), "count": .int(Int64($0.count))])
            }),
            "rules": .array(rules.map {
                .object(["rule": .string($0.rule), "count": .int(Int64($0.count)), "totalMs": Self.milliseconds($0.totalNanoseconds),
                         "meanMs": Self.milliseconds($0.totalNanoseconds / Int64(max($0.count, 1)))])
            }),
            "slowest": .array(slowest.map {
                .object(["kind": .string($0.kind), "path": .string($0.path), "ms": Self.milliseconds($0.nanoseconds)])
            }),
        ])
    }

    /// Milliseconds to the microsecond.
    static func milliseconds(_ nanoseconds: Int64) -> JSONValue {
        .double(Double(nanoseconds / 1000) / 1000)
    }
}
