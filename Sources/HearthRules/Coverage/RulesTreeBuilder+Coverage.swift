/// The coverage compile: every expression the author wrote becomes a site, its IR node
/// wrapped in a probe that records what it produced (`RuleSet.compile(_:coverage:)`).
extension RulesTreeBuilder {
    mutating func compileProbed(_ text: RulesString, kind: RuleKind, location: String, wildcards: [String]) -> CompiledRule? {
        guard let expression = parseRule(text, location: location) else { return nil }
        switch TypeChecker.checkRule(expression, scope: TypeChecker.Scope(kind: kind, wildcards: wildcards), probing: true) {
        case .success(let (ir, probes)):
            var outermost = true
            let probed = ir.renumberingProbes { local in
                defer { outermost = false }
                return addSite(text, probes[local].range, kind: CoverageRuleKind(kind), rule: location,
                               isWholeRule: outermost, isBoolean: probes[local].isBoolean)
            }
            return CompiledRule(body: .expression(probed), location: location)
        case .failure(let failures):
            for error in failures.errors { reportExpression(error, in: text, rulePath: location) }
            return nil
        }
    }

    /// A `true`/`false` rule: one site, the literal.
    mutating func addConstantSite(_ value: Bool, at offset: Int?, kind: RuleKind, rule: String) -> Int? {
        guard sites != nil else { return nil }
        let literal = value ? "true" : "false"
        let start = offset ?? 0
        let (line, column) = offset.map { _ in location(start) } ?? (0, 0)
        return append(CoverageSite(rule: rule, kind: CoverageRuleKind(kind), start: start, end: start + literal.utf8.count,
                                   line: line, column: column,
                                   expression: literal, written: 0..<literal.utf8.count, isWholeRule: true, isBoolean: true))
    }

    /// One `.indexOn` entry: its string literal, quotes included.
    mutating func addIndexOnSite(_ text: RulesString, at offset: Int?, rule: String) -> Int? {
        guard sites != nil else { return nil }
        let start = offset ?? 0
        let end = text.sourceOffsets?.last.map { $0 + 1 } ?? start
        let (line, column) = offset.map { _ in location(start) } ?? (0, 0)
        return append(CoverageSite(rule: rule, kind: .indexOn, start: start, end: end,
                                   line: line, column: column,
                                   expression: text.value, written: 0..<text.value.utf8.count, isWholeRule: true, isBoolean: false))
    }

    /// A sub-expression at `range` of the decoded rule text, mapped to the file through the
    /// string's source table (escapes and line breaks included).
    private mutating func addSite(_ text: RulesString, _ range: Range<Int>, kind: CoverageRuleKind, rule: String, isWholeRule: Bool, isBoolean: Bool) -> Int {
        let site: CoverageSite
        if source != nil, let start = text.fileOffset(forDecodedByte: range.lowerBound), let end = text.fileOffset(forDecodedByte: range.upperBound) {
            let (line, column) = location(start)
            site = CoverageSite(rule: rule, kind: kind, start: start, end: end, line: line, column: column,
                                expression: text.value, written: range, isWholeRule: isWholeRule, isBoolean: isBoolean)
        } else {
            site = CoverageSite(rule: rule, kind: kind, start: range.lowerBound, end: range.upperBound, line: 0, column: 0,
                                expression: text.value, written: range, isWholeRule: isWholeRule, isBoolean: isBoolean)
        }
        return append(site) ?? 0
    }

    /// Line and column of a site's start; sites come in file order, so each is counted on
    /// from the one before.
    private mutating func location(_ offset: Int) -> (line: Int, column: Int) {
        guard let source else { return (0, 0) }
        let (line, column) = source.location(ofByte: offset, after: lastPlace)
        lastPlace = SourceText.Place(offset: offset, line: line, column: column)
        return (line, column)
    }

    /// Past `maxSites` sites are counted (for the error) but not kept, so a huge file
    /// costs no more memory than the limit allows.
    private mutating func append(_ site: CoverageSite) -> Int? {
        guard sites != nil else { return nil }
        siteCount += 1
        if siteCount <= maxSites { sites?.append(site) }
        return siteCount - 1
    }
}

extension CoverageRuleKind {
    init(_ kind: RuleKind) {
        switch kind {
        case .read: self = .read
        case .write: self = .write
        case .validate: self = .validate
        }
    }
}
