import HearthJSON
import Synchronization

/// The server's namespaces by name: the seam the adapters pick a database core
/// through, so one request never touches two namespaces. A request without a name goes to
/// the default namespace. Without a namespaces file every name is the default's (what
/// Hearth did before namespaces); with one, a name it does not list is unknown. In emulator
/// mode (`--accept-emulator-owner`) a namespace is also created by its first rules
/// replacement (`PUT /.settings/rules.json?ns=<name>`, what `@firebase/rules-unit-testing`
/// sends first).
final class NamespaceRegistry: Sendable {
    /// Namespaces besides the default, at most: each holds its own store connections.
    static let maxNamespaces = 32

    let primary: Namespace
    private let others: Mutex<[String: Namespace]>
    /// Names the default namespace answers to (the file's `default`, `HEARTH_NAMESPACES`).
    let defaultNames: Set<String>
    /// True when a namespaces file lists the names: any other is unknown.
    let strict: Bool
    /// Opens a namespace with the rules text given (emulator mode); nil when none may be created.
    private let creator: (@Sendable (_ name: String, _ rules: [UInt8]) throws -> Namespace)?
    /// Creations one at a time, so a name is opened once.
    private let creating = Mutex(())

    init(primary: Namespace, others: [Namespace] = [], defaultNames: Set<String> = [], strict: Bool = false,
         creator: (@Sendable (_ name: String, _ rules: [UInt8]) throws -> Namespace)? = nil) {
        self.primary = primary
        self.others = Mutex(Dictionary(uniqueKeysWithValues: others.map { ($0.name, $0) }))
        self.defaultNames = defaultNames
        self.strict = strict
        self.creator = creator
    }

    /// What a request names.
    enum Resolution {
        case found(Namespace)
        /// Not served here: the name, for the client's error.
        case unknown(String)
    }

    /// The namespace `query`'s `ns` (or `host`'s first label) names.
    func resolve(query: String?, host: String?) -> Resolution {
        guard let (name, fromHost) = NamespaceName.named(query: query, host: host) else { return .found(primary) }
        if let found = others.withLock({ $0[name] }) { return .found(found) }
        // A host's label that names no other namespace is just a host name.
        if fromHost || !strict || defaultNames.contains(name) { return .found(primary) }
        return .unknown(name)
    }

    /// Each namespace's name, store size and open streams, the default first (`/metrics`).
    var stats: [(name: String, bytes: Int64, streams: Int)] {
        all.map { ($0.name, $0.instance.storageBytes, $0.context.streams.openStreams) }
    }

    /// Every namespace besides the default.
    var extras: [Namespace] {
        others.withLock { Array($0.values) }
    }

    /// Whether `name` may be created by a rules replacement (emulator mode, a valid name not
    /// served yet, room for one more).
    enum Creation: Error {
        case notAllowed
        case invalidName(String)
        case tooMany
        case failed(String)
    }

    /// The namespace `name`, created with `rules` when it is not served yet (emulator mode only).
    func create(_ name: String, rules: [UInt8]) throws(Creation) -> Namespace {
        guard let creator else { throw .notAllowed }
        if let problem = NamespaceName.problem(name) { throw .invalidName(problem) }
        return try creating.withLock { _ throws(Creation) -> Namespace in
            if let found = others.withLock({ $0[name] }) { return found }
            guard others.withLock({ $0.count }) < Self.maxNamespaces else { throw .tooMany }
            let opened: Namespace
            do {
                opened = try creator(name, rules)
            } catch {
                throw .failed("\(error)")
            }
            others.withLock { $0[name] = opened }
            return opened
        }
    }

    /// Whether a rules replacement for `name` would create it.
    func wouldCreate(_ name: String) -> Bool {
        creator != nil && others.withLock { $0[name] == nil } && !defaultNames.contains(name)
    }

    /// Every namespace, the default first, the others by name.
    var all: [Namespace] {
        [primary] + extras.sorted { $0.name < $1.name }
    }

    /// Closes every namespace, the default last.
    func closeAll() {
        let extras = others.withLock { others in
            defer { others = [:] }
            return Array(others.values)
        }
        for namespace in extras { namespace.close() }
        primary.close()
    }
}

extension NamespaceRegistry.Creation {
    /// The REST answer (the HTTP boundary).
    var apiError: APIError {
        switch self {
        case .notAllowed: APIError(404, "Namespaces are created only in emulator mode")
        case .invalidName(let reason): .badRequest(reason)
        case .tooMany: APIError(403, "At most \(NamespaceRegistry.maxNamespaces) namespaces besides the default")
        case .failed(let reason): APIError(503, "The namespace could not be opened: \(reason)")
        }
    }
}
