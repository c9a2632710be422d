/// One node of the compiled rules tree, mirroring the data tree (docs/protocol/rules.md
/// §3.1).
final class RuleNode: Sendable {
    struct NamedChild: Sendable {
        let key: String
        let node: RuleNode
    }

    struct Wildcard: Sendable {
        /// With the `$`, e.g. `$uid`.
        let name: String
        let node: RuleNode
    }

    /// Where the node is in the file, e.g. `/rules/users/$uid`.
    let rulesPath: String
    let read: CompiledRule?
    let write: CompiledRule?
    let validate: CompiledRule?
    let indexOn: [String]
    /// With coverage: the site of each `indexOn` entry, in the same order; else empty.
    let indexOnSites: [Int]
    let children: [NamedChild]
    let wildcard: Wildcard?

    init(rulesPath: String, read: CompiledRule?, write: CompiledRule?, validate: CompiledRule?, indexOn: [String], indexOnSites: [Int] = [],
         children: [NamedChild], wildcard: Wildcard?) {
        self.rulesPath = rulesPath
        self.indexOnSites = indexOnSites
        self.read = read
        self.write = write
        self.validate = validate
        self.indexOn = indexOn
        self.children = children
        self.wildcard = wildcard
    }

    /// The rules node for data key `key`: a named child takes precedence over the wildcard
    /// sibling (docs/protocol/rules.md §3.2; conformance case
    /// `cas-overlap-named-true-wildcard-false`). `captured` is true when the wildcard
    /// matched, so the key becomes the `$name` variable.
    func child(_ key: String) -> (node: RuleNode, captured: Bool)? {
        for child in children where child.key.hasSameBytes(as: key) {
            return (child.node, false)
        }
        if let wildcard { return (wildcard.node, true) }
        return nil
    }

    func rule(_ kind: RuleKind) -> CompiledRule? {
        switch kind {
        case .read: return read
        case .write: return write
        case .validate: return validate
        }
    }
}

/// A `.read`, `.write` or `.validate` rule after type checking.
struct CompiledRule: Sendable {
    enum Body: Sendable {
        case constant(Bool)
        case expression(IR)
    }

    let body: Body
    /// The rule's place in the file, e.g. `/rules/users/$uid/.read`, for explanations.
    let location: String
    /// With coverage, for a constant rule: its coverage site (an expression's sites are
    /// probes in its IR).
    let site: Int?

    init(body: Body, location: String, site: Int? = nil) {
        self.body = body
        self.location = location
        self.site = site
    }
}
