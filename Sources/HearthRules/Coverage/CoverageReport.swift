import HearthJSON

/// A snapshot of a rule set's coverage: every site with its counts, and the share of
/// sites evaluated at least once. `json` is the `coverage.json` format
/// (docs/protocol/emulator.md §4.9).
public struct CoverageReport: Sendable {
    public struct Entry: Sendable {
        public let site: CoverageSite
        /// Indexed by `CoverageResult.rawValue`.
        public let counts: [UInt32]
        public var level: CoverageLevel { RuleCoverage.level(of: site, counts: counts) }
        public var evaluations: UInt64 { counts.reduce(0) { $0 + UInt64($1) } }
    }

    public let sourceText: String?
    public let entries: [Entry]
    /// The most bytes of an expression's `text` in `json`; a longer one is cut at a
    /// character and ends with `…` (its `span` still locates all of it in `rules`). Nested
    /// sites repeat their children's text, so whole texts would make the document grow with
    /// the square of a long expression.
    public static let maxTextBytes = 200

    public init(_ coverage: RuleCoverage) {
        sourceText = coverage.sourceText
        entries = zip(coverage.sites, coverage.counts()).map { Entry(site: $0, counts: $1) }
    }

    /// Sites evaluated at least once.
    public var evaluatedCount: Int { entries.filter { $0.evaluations > 0 }.count }

    /// Percent of sites evaluated at least once (100 for rules without any site).
    public var percent: Double {
        entries.isEmpty ? 100 : Double(evaluatedCount) * 100 / Double(entries.count)
    }

    /// `text` cut to at most `maxTextBytes` bytes (then ending in `…`), at a character.
    static func shortened(_ text: String) -> String {
        guard text.utf8.count > maxTextBytes else { return text }
        var kept = ""
        var bytes = 0
        for character in text {
            bytes += character.utf8.count
            if bytes > maxTextBytes - 3 { break }
            kept.append(character)
        }
        return kept + "…"
    }

    public var json: JSONValue {
        let expressions: [JSONValue] = entries.map { entry in
            var counts: [JSONKey: JSONValue] = [:]
            for result in CoverageResult.allCases {
                let count = entry.counts[result.rawValue]
                let always: Bool
                switch result {
                case .true, .false, .error: always = entry.site.kind != .indexOn
                case .used: always = entry.site.kind == .indexOn
                default: always = false
                }
                if always || count > 0 { counts[JSONKey(result.name)] = .int(Int64(count)) }
            }
            let site = entry.site
            return .object([
                "rule": .string(site.rule),
                "kind": .string(site.kind.rawValue),
                "path": .string(site.path),
                "text": .string(Self.shortened(site.text)),
                "wholeRule": .bool(site.isWholeRule),
                "span": .object(["start": .int(Int64(site.start)), "end": .int(Int64(site.end)),
                                 "line": .int(Int64(site.line)), "column": .int(Int64(site.column))]),
                "evaluations": .int(Int64(clamping: entry.evaluations)),
                "coverage": .string(entry.level.rawValue),
                "counts": .object(counts),
            ])
        }
        return .object([
            "rules": sourceText.map(JSONValue.string) ?? .null,
            "sites": .int(Int64(entries.count)),
            "evaluated": .int(Int64(evaluatedCount)),
            "percent": .double((percent * 10).rounded() / 10),
            "expressions": .array(expressions),
        ])
    }
}
