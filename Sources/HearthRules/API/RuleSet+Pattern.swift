import HearthJSON

extension RuleSet {
    /// The segment a data key gets in a path pattern when no rules node covers it.
    public static let uncoveredKeyPattern = "$other"

    /// `path` with its keys collapsed by the rules' wildcards: `/users/alice/favorites/x`
    /// is `/users/$uid/favorites/$favId` under rules naming those variables. A named child
    /// wins over a wildcard sibling, as in every decision; each key below the deepest rules
    /// node on the path becomes `$other` (`uncoveredKeyPattern`), so the number of patterns
    /// stays that of the rules' shape, not of the data's keys. The root is `/`.
    public func pattern(of path: DataPath) -> String {
        var node: RuleNode? = root
        var pattern = ""
        for key in path.segments {
            pattern += "/"
            guard let next = node?.child(key) else {
                node = nil
                pattern += Self.uncoveredKeyPattern
                continue
            }
            if next.captured, let wildcard = node?.wildcard {
                pattern += wildcard.name
            } else {
                pattern += key
            }
            node = next.node
        }
        return pattern.isEmpty ? "/" : pattern
    }
}
