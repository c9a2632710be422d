import HearthJSON

extension RuleSet {
    /// May `auth` make this write? `writes` holds absolute paths and their new values (nil
    /// deletes): one entry for a PUT, every entry of a multi-path PATCH
    /// (docs/protocol/rules.md §3.2).
    ///
    /// Every written path needs a `.write` grant on its root→path cascade. Then every
    /// `.validate` must pass: on the root→path chain and on every node present in the
    /// written value, skipped where the new data is null. `newData` is the tree after *all*
    /// entries apply; any denial rejects the whole write.
    ///
    /// - Parameters:
    ///   - data: the tree before the write (`root`, `data`); `newData` is this tree with
    ///     `writes` applied (`WriteOverlay`).
    ///   - auth: the `auth` variable (`.null` when signed out).
    ///   - now: server time in ms; `{".sv":"timestamp"}` must already be resolved to it.
    ///   - explain: also list every rule evaluated in the decision's explanation.
    ///   - timing: told each evaluated rule's time (a profiler).
    public func canWrite(_ writes: [(path: DataPath, value: JSONValue?)], data: any RuleDataSource, auth: JSONValue, now: Int64, explain: Bool = false,
                         timing: (any RuleTiming)? = nil) -> RuleDecision {
        decideWrite(writes, data: data, auth: auth, now: now, explain: explain, timing: timing).decision
    }

    /// `canWrite` decided without the stored tree or the clock, for a caller that would
    /// rather decide a write before it queues for the single writer: the
    /// decision, or nil when it needs either — an evaluated rule read `data`, `root` or
    /// `now`, or `newData` somewhere the writes do not replace (a sibling an update leaves,
    /// a parent, a delete's surroundings). A decision it returns is the one `canWrite`
    /// makes on any stored tree at any time. Values holding server values (`.sv`) must be
    /// resolved first, so callers decide those on the writer. An allowed decision comes
    /// without an explanation (its caller needs only the answer); a denial has its summary.
    ///
    /// With coverage its evaluations count only when it returns an allowed decision (its
    /// caller then asks nothing more); otherwise the caller decides on the writer with
    /// `canWrite`, which counts.
    public func canWriteWithoutData(_ writes: [(path: DataPath, value: JSONValue?)], auth: JSONValue,
                                    timing: (any RuleTiming)? = nil) -> RuleDecision? {
        let data = UnreadableData()
        let (decision, context) = decideWrite(writes, data: data, auth: auth, now: 0, explain: false, timing: timing,
                                              summarizeAllowed: false, deferredCoverage: true)
        let usable = !(context.usedStoredDataOrTime || data.wasRead || context.hits?.overflowed == true)
        if !(usable && decision.allowed) { context.hits?.discard() }
        return usable ? decision : nil
    }

    /// The decision and its context (whose coverage hits are added when it goes away;
    /// `deferredCoverage`: held until then, for the caller to discard).
    private func decideWrite(_ writes: [(path: DataPath, value: JSONValue?)], data: any RuleDataSource, auth: JSONValue, now: Int64, explain: Bool,
                             timing: (any RuleTiming)?, summarizeAllowed: Bool = true,
                             deferredCoverage: Bool = false) -> (decision: RuleDecision, context: DecisionContext) {
        // Values should arrive normalised; if one does not (an array, a null inside), the
        // stored form is used so that every node that will exist is validated.
        let writes = writes.map { (path: $0.path, value: $0.value.flatMap(OverlayTrie.present)) }
        let overlay = WriteOverlay(base: data, writes: writes)
        var context = DecisionContext(before: data, after: overlay, auth: auth, now: now, query: nil, limits: limits, explain: explain,
                                      coverage: coverage, deferredCoverage: deferredCoverage)
        context.timing = timing
        let decision = decideWrite(writes, context: &context, summarizeAllowed: summarizeAllowed)
        return (decision, context)
    }

    /// `summarizeAllowed`: false leaves an allowed decision's explanation empty (the
    /// early check's caller reads only the answer; the summary's path and text were ~5 %
    /// of its time). Denials are always summarized.
    private func decideWrite(_ writes: [(path: DataPath, value: JSONValue?)], context: inout DecisionContext,
                             summarizeAllowed: Bool) -> RuleDecision {
        guard !writes.isEmpty else {
            return context.decision(false, "write denied: it names no path")
        }
        let multiPath = writes.count > 1
        var operation: String { multiPath ? "update of \(writes.count) paths" : "write to \(writes[0].path.description)" }
        do {
            let cache = multiPath ? GrantCache() : nil
            var grants: [String] = []
            for write in writes {
                guard let granted = try cascade(.write, to: write.path, context: &context, cache: cache) else {
                    return context.decision(false, "\(operation) denied: no .write rule granted \(write.path.description)")
                }
                if !grants.contains(granted) { grants.append(granted) }
            }
            var walk = ValidationWalk(multiPath: multiPath, maxNodes: limits.maxValidatedNodes)
            for write in writes {
                if let failed = try validate(write.path, write.value, &walk, &context) {
                    return context.decision(false, "\(operation) denied: \(failed.rule) at \(failed.path.description) failed",
                                            denial: .validationFailed(rule: failed.rule, path: failed.path, reason: failed.reason))
                }
            }
            if !summarizeAllowed && !context.explain {
                context.reportRuleTimes()
                return RuleDecision(allowed: true, explanation: [], dependsOnDataOrTime: context.usedDataOrTime)
            }
            return context.decision(true, "\(operation) allowed by \(grants.joined(separator: ", "))")
        } catch {
            return context.decision(false, Self.abortReason(error, operation: operation), denial: denial(error))
        }
    }

    /// Bookkeeping shared by the validations of one write decision.
    struct ValidationWalk {
        let multiPath: Bool
        let maxNodes: Int
        var nodesWalked = 0
        /// Nodes already validated: in a multi-path update, ancestors shared by several
        /// entries are validated once.
        var done = Set<[UInt8]>()

        init(multiPath: Bool, maxNodes: Int) {
            self.multiPath = multiPath
            self.maxNodes = maxNodes
        }

        mutating func firstVisit(_ path: DataPath) -> Bool {
            multiPath ? done.insert(path.exactKey).inserted : true
        }
    }

    /// Runs the `.validate` rules one written entry brings into play; returns the failing
    /// rule and path, or nil if all pass.
    private func validate(_ path: DataPath, _ value: JSONValue?, _ walk: inout ValidationWalk, _ context: inout DecisionContext) throws(EvaluationFailure) -> (rule: String, path: DataPath, reason: String?)? {
        var node = root
        var captures: [String] = []
        let segments = path.segments
        var depth = 0
        while true {
            if let rule = node.validate {
                let nodePath = depth == segments.count ? path : DataPath(uncheckedSegments: Array(segments[0..<depth]))
                if walk.firstVisit(nodePath), try context.exists(SnapshotRef(view: .after, path: nodePath)) {
                    let frame = DecisionContext.Frame(path: nodePath, captures: captures)
                    if !(try context.run(rule, at: frame)) {
                        return (rule.location, nodePath, context.reason(rule, frame))
                    }
                }
            }
            guard depth < segments.count else { break }
            guard let next = node.child(segments[depth]) else { return nil }
            if next.captured { captures.append(segments[depth]) }
            node = next.node
            depth += 1
        }
        guard let value else { return nil }
        return try validateDescendants(of: value, node: node, path: path, captures: captures, &walk, &context)
    }

    /// Every node present in the written value that has rules (docs/protocol/rules.md
    /// §3.2).
    private func validateDescendants(of value: JSONValue, node: RuleNode, path: DataPath, captures: [String], _ walk: inout ValidationWalk, _ context: inout DecisionContext) throws(EvaluationFailure) -> (rule: String, path: DataPath, reason: String?)? {
        guard case .object(let children) = value, !(node.children.isEmpty && node.wildcard == nil) else { return nil }
        if context.explain {
            // Sorted only for a stable trace; the outcome does not depend on the order.
            for (key, childValue) in children.sorted(by: { $0.key.string < $1.key.string }) {
                if let failed = try validateChild(key.string, childValue, node: node, path: path, captures: captures, &walk, &context) {
                    return failed
                }
            }
            return nil
        }
        for (key, childValue) in children {
            if let failed = try validateChild(key.string, childValue, node: node, path: path, captures: captures, &walk, &context) {
                return failed
            }
        }
        return nil
    }

    /// One child of a written object: its `.validate` if it has rules, then its own children.
    private func validateChild(_ key: String, _ childValue: JSONValue, node: RuleNode, path: DataPath, captures: [String], _ walk: inout ValidationWalk, _ context: inout DecisionContext) throws(EvaluationFailure) -> (rule: String, path: DataPath, reason: String?)? {
        switch childValue {
        case .null: return nil
        case .object(let grandchildren) where grandchildren.isEmpty: return nil
        default: break
        }
        guard let next = node.child(key) else { return nil }
        // Normalised values only hold valid keys within the depth limit; anything else
        // cannot be stored, so it is refused rather than validated partially.
        guard DataPath.isValidKey(key), path.count < DataPath.maxSegments else {
            throw .invalidWrite("the value written at \(path) holds an invalid key or is too deep")
        }
        walk.nodesWalked += 1
        if walk.nodesWalked > walk.maxNodes { throw .validationLimitExceeded }
        let childPath = path.childPath(key)
        let childCaptures = next.captured ? captures + [key] : captures
        if let rule = next.node.validate, walk.firstVisit(childPath) {
            // In a multi-path update a later entry may have removed this node again.
            let present = walk.multiPath ? try context.exists(SnapshotRef(view: .after, path: childPath)) : true
            let frame = DecisionContext.Frame(path: childPath, captures: childCaptures)
            if present, !(try context.run(rule, at: frame)) {
                return (rule.location, childPath, context.reason(rule, frame))
            }
        }
        return try validateDescendants(of: childValue, node: next.node, path: childPath, captures: childCaptures, &walk, &context)
    }
}

/// The stored tree for `canWriteWithoutData`: every read fails (the rule reading it
/// evaluates as it would on a failed read) and is remembered, so the decision is dropped.
private final class UnreadableData: RuleDataSource {
    struct Unread: Error {}
    private(set) var wasRead = false

    func leaf(at path: DataPath) throws -> JSONValue? {
        wasRead = true
        throw Unread()
    }

    func childKeys(at path: DataPath) throws -> [String] {
        wasRead = true
        throw Unread()
    }

    func exists(at path: DataPath) throws -> Bool {
        wasRead = true
        throw Unread()
    }
}
