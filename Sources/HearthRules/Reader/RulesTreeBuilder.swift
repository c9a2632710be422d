import HearthJSON

/// Turns the parsed rules file into the compiled `RuleNode` tree, checking its structure
/// (docs/protocol/rules.md §3.1, §3.6; the conformance corpus's `invalid-rules.json`) and
/// compiling every expression. It keeps going after a problem so that one load reports all
/// of them.
struct RulesTreeBuilder {
    let source: SourceText?
    private(set) var diagnostics: [RuleDiagnostic] = []
    /// Coverage sites, when compiling with probes (nil: a plain compile).
    var sites: [CoverageSite]?
    /// Sites found, kept or not (past `maxSites` they are only counted).
    var siteCount = 0
    /// The last site located in the file, to locate the next from there.
    var lastPlace: SourceText.Place?
    /// At most this many sites (`RuleLimits.maxCoverageSites`).
    let maxSites: Int

    private init(source: SourceText?, coverage: Bool, maxSites: Int) {
        self.source = source
        self.sites = coverage ? [] : nil
        self.maxSites = maxSites
    }

    static func build(_ json: RulesJSON, source: SourceText?) -> Result<RuleNode, RulesCompileError> {
        build(json, source: source, coverage: false, maxSites: 0).map(\.root)
    }

    /// `build`; with `coverage`, also the coverage sites, every expression probed.
    static func build(_ json: RulesJSON, source: SourceText?, coverage: Bool, maxSites: Int) -> Result<(root: RuleNode, sites: [CoverageSite]), RulesCompileError> {
        var builder = RulesTreeBuilder(source: source, coverage: coverage, maxSites: maxSites)
        let root = builder.buildFile(json)
        if builder.siteCount > maxSites {
            builder.report(.structure, "", at: nil, "the rules have \(builder.siteCount) expressions and sub-expressions, more than the \(maxSites) coverage can record")
        }
        if let root, builder.diagnostics.isEmpty { return .success((root, builder.sites ?? [])) }
        return .failure(RulesCompileError(diagnostics: builder.diagnostics))
    }

    // MARK: - Diagnostics

    mutating func report(_ kind: RuleDiagnostic.Kind, _ rulePath: String, at offset: Int?, _ message: String) {
        var line = 0
        var column = 0
        if let source, let offset {
            (line, column) = source.location(ofByte: offset)
        }
        diagnostics.append(RuleDiagnostic(kind: kind, rulePath: rulePath, line: line, column: column, message: message))
    }

    /// An expression error: the offset inside the decoded expression is mapped back through
    /// the string's source table to the file (escapes and line breaks included).
    mutating func reportExpression(_ error: ExpressionError, in text: RulesString, rulePath: String) {
        if let source, let fileOffset = text.fileOffset(forDecodedByte: error.offset) {
            let (line, column) = source.location(ofByte: fileOffset)
            diagnostics.append(RuleDiagnostic(kind: .expression, rulePath: rulePath, line: line, column: column, message: error.message))
        } else {
            let column = SourceText(text.value).location(ofByte: error.offset).column
            diagnostics.append(RuleDiagnostic(kind: .expression, rulePath: rulePath, line: 0, column: column, message: error.message))
        }
    }

    // MARK: - Structure

    private mutating func buildFile(_ json: RulesJSON) -> RuleNode? {
        guard case .object(let members) = json.kind else {
            report(.structure, "", at: json.offset, "a rules file must be a JSON object with a \"rules\" key, not \(json.typeDescription)")
            return nil
        }
        var rules: RulesJSON?
        for member in members {
            if member.key == "rules" {
                rules = member.value
            } else {
                report(.structure, "/" + member.key, at: member.keyOffset, "unexpected top-level key \"\(member.key)\"; a rules file has only \"rules\"")
            }
        }
        guard let rules else {
            report(.structure, "", at: json.offset, "missing the top-level \"rules\" key")
            return nil
        }
        guard case .object = rules.kind else {
            report(.structure, "/rules", at: rules.offset, "\"rules\" must be an object, not \(rules.typeDescription)")
            return nil
        }
        return buildNode(rules, rulesPath: "/rules", wildcards: [])
    }

    private mutating func buildNode(_ json: RulesJSON, rulesPath: String, wildcards: [String]) -> RuleNode {
        var read: CompiledRule?
        var write: CompiledRule?
        var validate: CompiledRule?
        var indexOn: [String] = []
        var indexOnSites: [Int] = []
        var children: [RuleNode.NamedChild] = []
        var wildcard: RuleNode.Wildcard?
        guard case .object(let members) = json.kind else {
            return RuleNode(rulesPath: rulesPath, read: nil, write: nil, validate: nil, indexOn: [], children: [], wildcard: nil)
        }
        for member in members {
            let key = member.key
            let childPath = rulesPath + "/" + key
            if key.hasPrefix(".") {
                switch key {
                case RuleKind.read.rawValue:
                    read = compileRule(member.value, kind: .read, location: childPath, wildcards: wildcards)
                case RuleKind.write.rawValue:
                    write = compileRule(member.value, kind: .write, location: childPath, wildcards: wildcards)
                case RuleKind.validate.rawValue:
                    validate = compileRule(member.value, kind: .validate, location: childPath, wildcards: wildcards)
                case ".indexOn":
                    (indexOn, indexOnSites) = readIndexOn(member.value, rulesPath: childPath)
                default:
                    report(.structure, childPath, at: member.keyOffset, "unknown rule type \"\(key)\"; expected .read, .write, .validate or .indexOn")
                }
                continue
            }
            guard checkChildNode(member, rulesPath: childPath) else { continue }
            if key.hasPrefix("$") {
                guard Self.isValidWildcardName(key) else {
                    report(.structure, childPath, at: member.keyOffset, "invalid wildcard name \"\(key)\"; use $ followed by letters, digits or _")
                    continue
                }
                if let existing = wildcard {
                    report(.structure, childPath, at: member.keyOffset, "only one wildcard child per level is allowed; this level already has \(existing.name)")
                    continue
                }
                if wildcards.contains(key) {
                    report(.structure, childPath, at: member.keyOffset, "wildcard \(key) is already declared higher on this path")
                    continue
                }
                wildcard = RuleNode.Wildcard(name: key, node: buildNode(member.value, rulesPath: childPath, wildcards: wildcards + [key]))
            } else {
                guard DataPath.isValidKey(key) else {
                    report(.structure, childPath, at: member.keyOffset, "invalid key \"\(key)\": keys cannot be empty or contain . $ # [ ] / or control characters")
                    continue
                }
                children.append(RuleNode.NamedChild(key: key, node: buildNode(member.value, rulesPath: childPath, wildcards: wildcards)))
            }
        }
        return RuleNode(rulesPath: rulesPath, read: read, write: write, validate: validate, indexOn: indexOn, indexOnSites: indexOnSites,
                        children: children, wildcard: wildcard)
    }

    private mutating func checkChildNode(_ member: RulesJSON.Member, rulesPath: String) -> Bool {
        switch member.value.kind {
        case .object:
            return true
        case .null:
            report(.structure, rulesPath, at: member.value.offset, "a rules node cannot be null")
        default:
            report(.structure, rulesPath, at: member.value.offset, "a rules node must be an object, not \(member.value.typeDescription)")
        }
        return false
    }

    static func isValidWildcardName(_ key: String) -> Bool {
        let bytes = Array(key.utf8)
        guard bytes.count >= 2, bytes.count <= DataPath.maxKeyBytes, bytes[0] == UInt8(ascii: "$") else { return false }
        return bytes.dropFirst().allSatisfy { Lexer.isIdentifierPart($0) && $0 != UInt8(ascii: "$") }
    }

    /// `.indexOn`: a string or an array of strings, each a child name, a nested path such
    /// as `ratings/pos`, or `.value` (docs/protocol/rules.md §3.1).
    private mutating func readIndexOn(_ json: RulesJSON, rulesPath: String) -> (entries: [String], sites: [Int]) {
        var entries: [(String, Int?)] = []
        var strings: [RulesString] = []
        switch json.kind {
        case .string(let text):
            entries = [(text.value, json.offset)]
            strings = [text]
        case .array(let elements):
            for element in elements {
                guard case .string(let text) = element.kind else {
                    report(.structure, rulesPath, at: element.offset, ".indexOn entries must be strings, not \(element.typeDescription)")
                    continue
                }
                entries.append((text.value, element.offset))
                strings.append(text)
            }
        default:
            report(.structure, rulesPath, at: json.offset, ".indexOn must be a string or an array of strings, not \(json.typeDescription)")
            return ([], [])
        }
        var result: [String] = []
        var sites: [Int] = []
        for ((entry, offset), text) in zip(entries, strings) {
            let segments = entry.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
            if entry == ".value" || segments.allSatisfy(DataPath.isValidKey) {
                result.append(entry)
                if let site = addIndexOnSite(text, at: offset, rule: rulesPath) { sites.append(site) }
            } else {
                report(.structure, rulesPath, at: offset, "invalid .indexOn entry \"\(entry)\": expected a child name, a nested path or .value")
            }
        }
        return (result, sites)
    }

    // MARK: - Expressions

    /// The rule's syntax tree, or nil with its error reported.
    mutating func parseRule(_ text: RulesString, location: String) -> Expr? {
        do {
            return try Parser.parse(text.value)
        } catch {
            reportExpression(error, in: text, rulePath: location)
            return nil
        }
    }

    private mutating func compileRule(_ json: RulesJSON, kind: RuleKind, location: String, wildcards: [String]) -> CompiledRule? {
        switch json.kind {
        case .bool(let value):
            return CompiledRule(body: .constant(value), location: location, site: addConstantSite(value, at: json.offset, kind: kind, rule: location))
        case .string(let text) where sites != nil:
            return compileProbed(text, kind: kind, location: location, wildcards: wildcards)
        case .string(let text):
            guard let expression = parseRule(text, location: location) else { return nil }
            switch TypeChecker.checkRule(expression, scope: TypeChecker.Scope(kind: kind, wildcards: wildcards)) {
            case .success(.constant(.bool(let value))):
                return CompiledRule(body: .constant(value), location: location)
            case .success(let ir):
                return CompiledRule(body: .expression(ir), location: location)
            case .failure(let failures):
                for error in failures.errors { reportExpression(error, in: text, rulePath: location) }
                return nil
            }
        default:
            report(.structure, location, at: json.offset, "\(kind.rawValue) must be a boolean or an expression string, not \(json.typeDescription)")
            return nil
        }
    }
}
