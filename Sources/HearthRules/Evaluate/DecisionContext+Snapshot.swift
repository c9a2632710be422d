import HearthJSON

/// RuleDataSnapshot methods (docs/protocol/rules.md §3.4).
extension DecisionContext {
    mutating func callSnapshot(_ object: IR, _ method: SnapshotMethod, _ arguments: [IR], _ frame: Frame) throws(EvaluationFailure) -> RuntimeValue {
        guard case .snapshot(let snapshot) = try evaluate(object, frame) else {
            throw .runtime("\(method.rawValue)() called on a value that is not a snapshot")
        }
        switch method {
        case .val:
            if let leaf = try leaf(snapshot) { return RuntimeValue(leaf) }
            return try exists(snapshot) ? .nonLeaf : .null
        case .child:
            return .snapshot(snapshot.child(try stringArgument(arguments[0], frame, method)))
        case .parent:
            guard let parent = snapshot.parent() else { throw .runtime("parent() of the root") }
            return .snapshot(parent)
        case .hasChild:
            return .bool(try exists(snapshot.child(try stringArgument(arguments[0], frame, method))))
        case .hasChildren:
            if arguments.isEmpty {
                // Has children = exists and is not a leaf.
                if try leaf(snapshot) != nil { return .bool(false) }
                return .bool(try exists(snapshot))
            }
            var names: [String] = []
            for argument in arguments {
                names.append(try stringArgument(argument, frame, method))
            }
            if let path = snapshot.path, names.allSatisfy(Self.isSingleKey),
               case .some(let node) = try source(snapshot.view).valueInMemory(at: path) {
                // The node is in memory (newData where the write replaced it): one lookup
                // of the node, then each name in it (six lookups from the root
                // were ~3 % of a create's CPU). Charged as the lookups it stands for.
                for name in names {
                    try charge(RuleLimits.dataLookupCost)
                    if node.flatMap({ JSONTreeSource.child(of: $0, name) }) == nil { return .bool(false) }
                }
                return .bool(true)
            }
            for name in names where !(try exists(snapshot.child(name))) {
                return .bool(false)
            }
            return .bool(true)
        case .exists:
            return .bool(try exists(snapshot))
        case .getPriority:
            // The corpus does not cover priorities (Tests/HearthRulesTests/Fixtures/README.md,
            // "Not covered"); rules see none: always null.
            return .null
        case .isNumber:
            switch try leaf(snapshot) {
            case .int?, .double?: return .bool(true)
            default: return .bool(false)
            }
        case .isString:
            if case .string? = try leaf(snapshot) { return .bool(true) }
            return .bool(false)
        case .isBoolean:
            if case .bool? = try leaf(snapshot) { return .bool(true) }
            return .bool(false)
        }
    }

    /// A name `child(name)` takes as one key that data can have: no `/` to split on.
    private static func isSingleKey(_ name: String) -> Bool {
        !name.utf8.contains(UInt8(ascii: "/")) && DataPath.isValidKey(name)
    }

    /// A method argument that must be a string at run time: `child(null)` and
    /// `hasChild(1)` are runtime errors (docs/protocol/rules.md §3.2, §3.4).
    private mutating func stringArgument(_ argument: IR, _ frame: Frame, _ method: SnapshotMethod) throws(EvaluationFailure) -> String {
        let value = try evaluate(argument, frame)
        guard case .string(let text) = value else {
            throw .runtime("\(method.rawValue)() needs a string, not \(value.typeName)")
        }
        return text
    }

    private func source(_ view: SnapshotRef.View) throws(EvaluationFailure) -> any RuleDataSource {
        switch view {
        case .before: return before
        case .after:
            guard let after else { throw .runtime("newData is only defined for writes") }
            return after
        }
    }

    mutating func leaf(_ snapshot: SnapshotRef) throws(EvaluationFailure) -> JSONValue? {
        guard let path = snapshot.path else { return nil }
        try charge(RuleLimits.dataLookupCost)
        let source = try source(snapshot.view)
        do {
            return try source.leaf(at: path)
        } catch {
            throw .dataSource("reading \(path) failed: \(error)")
        }
    }

    mutating func exists(_ snapshot: SnapshotRef) throws(EvaluationFailure) -> Bool {
        guard let path = snapshot.path else { return false }
        try charge(RuleLimits.dataLookupCost)
        let source = try source(snapshot.view)
        do {
            return try source.exists(at: path)
        } catch {
            throw .dataSource("reading \(path) failed: \(error)")
        }
    }
}
