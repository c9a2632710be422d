import HearthJSON

/// Runs every case of a `cases.json` corpus file (Tests/HearthRulesTests/Fixtures/README.md, "Case format"). A file
/// that is not JSON, or an entry that is malformed, is reported as a failure. With
/// `ruleSet` (`hearth rules test --rules`), every case is decided by it, and a case need
/// not carry `rules`.
public func runConformance(casesJSON: [UInt8], explain: Bool = false, ruleSet: RuleSet? = nil) -> ConformanceReport {
    let entries: [JSONValue]
    switch parseCorpus(casesJSON) {
    case .success(let list): entries = list
    case .failure(let error): return ConformanceReport(results: [ConformanceResult(id: "(file)", passed: false, detail: error.description)])
    }
    var results: [ConformanceResult] = []
    for (index, entry) in entries.enumerated() {
        do {
            let defaultRules: ConformanceCase.RulesSource? = ruleSet.map { _ in .json(.null) }
            results.append(try ConformanceCase(json: entry, defaultRules: defaultRules).run(explain: explain, with: ruleSet))
        } catch {
            results.append(ConformanceResult(id: "(entry \(index))", passed: false, detail: error.description))
        }
    }
    return ConformanceReport(results: results)
}

/// Checks a rules-loading corpus: `invalid-rules.json` (`expectValid: false`, every file
/// must be rejected) or `valid-rules.json` (`expectValid: true`, every file must load).
/// `rules` is the parsed file, or its raw text when given as a string.
public func checkRulesCorpus(json: [UInt8], expectValid: Bool) -> ConformanceReport {
    let entries: [JSONValue]
    switch parseCorpus(json) {
    case .success(let list): entries = list
    case .failure(let error): return ConformanceReport(results: [ConformanceResult(id: "(file)", passed: false, detail: error.description)])
    }
    var results: [ConformanceResult] = []
    for (index, entry) in entries.enumerated() {
        guard case .object(let fields) = entry, let rules = fields["rules"] else {
            results.append(ConformanceResult(id: "(entry \(index))", passed: false, detail: "an entry needs \"rules\""))
            continue
        }
        let id = fields["id"]?.stringValue ?? "(entry \(index))"
        let outcome: Result<RuleSet, RulesCompileError>
        if case .string(let text) = rules {
            outcome = Result { () throws(RulesCompileError) in try RuleSet.compile(text) }
        } else {
            outcome = Result { () throws(RulesCompileError) in try RuleSet.compile(json: rules) }
        }
        switch (outcome, expectValid) {
        case (.success, true):
            results.append(ConformanceResult(id: id, passed: true, detail: "loaded"))
        case (.failure(let error), false):
            results.append(ConformanceResult(id: id, passed: true, detail: "rejected: \(error)"))
        case (.success, false):
            results.append(ConformanceResult(id: id, passed: false, detail: "loaded, but must be rejected"))
        case (.failure(let error), true):
            results.append(ConformanceResult(id: id, passed: false, detail: "rejected, but must load: \(error)"))
        }
    }
    return ConformanceReport(results: results)
}

private func parseCorpus(_ bytes: [UInt8]) -> Result<[JSONValue], ConformanceError> {
    do {
        guard case .array(let entries) = try JSONParser.parse(bytes) else {
            return .failure(ConformanceError("a corpus file must be a JSON array"))
        }
        return .success(entries)
    } catch {
        return .failure(ConformanceError("corpus file is not JSON: \(error)"))
    }
}
