import HearthJSON

extension ConformanceCase {
    /// Runs the case: compiles its rules, builds the database from `data`, resolves
    /// `{".sv":"timestamp"}` to `now`, normalises values as the server would, asks the
    /// rule set, and compares with `expect`.
    ///
    /// With `ruleSet`, the case is decided by it instead of its own rules (one rules file
    /// for every case, e.g. compiled with coverage).
    public func run(explain: Bool = false, with given: RuleSet? = nil) -> ConformanceResult {
        let ruleSet: RuleSet
        do {
            switch (given, rules) {
            case (let given?, _): ruleSet = given
            case (nil, .text(let text)): ruleSet = try RuleSet.compile(text)
            case (nil, .json(let json)): ruleSet = try RuleSet.compile(json: json)
            }
        } catch {
            return ConformanceResult(id: id, passed: false, detail: "rules did not compile: \(error)")
        }
        let decision: RuleDecision
        do {
            decision = try decide(with: ruleSet, explain: explain)
        } catch {
            return ConformanceResult(id: id, passed: false, detail: "bad case: \(error)")
        }
        let expected = expectAllowed ? "allow" : "deny"
        let actual = decision.allowed ? "allow" : "deny"
        let passed = decision.allowed == expectAllowed
        let detail = passed
            ? actual
            : "expected \(expected), got \(actual): \(decision.explanation.joined(separator: " | "))"
        return ConformanceResult(id: id, passed: passed, detail: detail, decision: decision)
    }

    /// The decision the case asks for.
    public func decide(with ruleSet: RuleSet, explain: Bool = false) throws(ConformanceError) -> RuleDecision {
        let database = try normalized(ServerValues.resolve(data, now: now), at: .root)
        let source = JSONTreeSource(database)
        let target: DataPath
        do {
            target = try DataPath(string: path)
        } catch {
            throw ConformanceError("invalid path \(path): \(error)")
        }
        switch operation {
        case .read(let query):
            return ruleSet.canRead(target, data: source, auth: auth, now: now, query: query, explain: explain)
        case .set(let value):
            let write = try normalized(ServerValues.resolve(value, now: now), at: target)
            return ruleSet.canWrite([(target, write)], data: source, auth: auth, now: now, explain: explain)
        case .update(let updates):
            let writes: [(path: DataPath, value: JSONValue?)]
            do {
                writes = try MultiPathUpdate.parse(base: target, body: ServerValues.resolve(updates, now: now))
            } catch {
                throw ConformanceError("invalid update: \(error)")
            }
            return ruleSet.canWrite(writes, data: source, auth: auth, now: now, explain: explain)
        }
    }

    private func normalized(_ value: JSONValue, at path: DataPath) throws(ConformanceError) -> JSONValue? {
        do {
            return try FirebaseTree.normalize(value, at: path)
        } catch {
            throw ConformanceError("value at \(path) cannot be stored: \(error)")
        }
    }
}

/// Firebase server values in test data: `{".sv": "timestamp"}` becomes `now` (a
/// convention of the conformance corpus: Tests/HearthRulesTests/Fixtures/README.md,
/// "Harness conventions"). The server resolves them itself before asking the
/// rules.
enum ServerValues {
    static func resolve(_ value: JSONValue, now: Int64) -> JSONValue {
        switch value {
        case .object(let children):
            if children.count == 1, children[".sv"] == .string("timestamp") { return .int(now) }
            return .object(children.mapValues { resolve($0, now: now) })
        case .array(let elements):
            return .array(elements.map { resolve($0, now: now) })
        case .null, .bool, .int, .double, .string:
            return value
        }
    }
}
