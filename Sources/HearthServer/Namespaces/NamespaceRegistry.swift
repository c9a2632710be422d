import HearthJSON
import Synchronization

/// The server's namespaces by name: the seam the adapters pick a database core through, so
/// one request never touches two namespaces. A request without a name, or naming one of
/// `defaultNames`, goes to the default namespace. Without a namespaces file every name is
/// the default's (what Hearth did before namespaces); with one, a name it does not list is
/// unknown. In emulator mode (`--accept-emulator-owner`) without a namespaces file, the first
/// request of any kind whose `ns` names a namespace not served yet creates it, as the
/// Firebase emulator does: with the server's rules file until its rules are replaced, or
/// with the rules a first rules replacement (`PUT /.settings/rules.json?ns=<name>`) brings.
/// A host's label never creates one, nor does a default name.
final class NamespaceRegistry: Sendable {
    /// Namespaces besides the default, at most: each holds its own store connections.
    static let maxNamespaces = 32

    let primary: Namespace
    private let others: Mutex<[String: Namespace]>
    /// Names the default namespace answers to (`defaultNames(_:fileDefault:)`).
    let defaultNames: Set<String>
    /// True when a namespaces file lists the names: any other is unknown.
    let strict: Bool
    /// Opens a namespace with the rules text given, or (nil) its replaced rules kept from
    /// before, else the server's rules file (emulator mode); nil when none may be created.
    private let creator: (@Sendable (_ name: String, _ rules: [UInt8]?) throws -> Namespace)?
    /// Creations one at a time, so a name is opened once.
    private let creating = Mutex(())

    init(primary: Namespace, others: [Namespace] = [], defaultNames: Set<String> = [], strict: Bool = false,
         creator: (@Sendable (_ name: String, _ rules: [UInt8]?) throws -> Namespace)? = nil) {
        self.primary = primary
        self.others = Mutex(Dictionary(uniqueKeysWithValues: others.map { ($0.name, $0) }))
        self.defaultNames = defaultNames
        self.strict = strict
        self.creator = creator
    }

    /// The names the default namespace answers to: those of `HEARTH_NAMESPACES`, the
    /// namespaces file's `default`, and in emulator mode the project id (`--project-id`) and
    /// `<project id>-default-rtdb`, the database the Firebase emulator's functions and the
    /// Admin SDKs name when pointed at the project's default database
    /// (`FIREBASE_DATABASE_EMULATOR_HOST`), so those requests reach the default namespace
    /// instead of creating one.
    static func defaultNames(_ configuration: HearthConfiguration, fileDefault: String?) -> Set<String> {
        var names = Set(configuration.namespaces)
        if let fileDefault { names.insert(fileDefault) }
        if configuration.auth.acceptEmulatorOwner {
            let project = configuration.auth.projectID
            names.formUnion([project, project + "-default-rtdb"])
        }
        return names
    }

    /// What a request names.
    enum Resolution {
        case found(Namespace)
        /// Not served here: the name, for the client's error.
        case unknown(String)
        /// Named by `ns` in emulator mode and not created: why (an invalid name, too many, the
        /// store failed to open).
        case refused(Creation)
        /// Named by `ns` in emulator mode and not served yet: `created(_:)` makes it (it
        /// opens a store, so the caller does it off the connection's I/O thread).
        case create(String)
    }

    /// The namespace `query`'s `ns` (or `host`'s first label) names; in emulator mode a name
    /// `ns` gives that is not served yet is to be created (`created(_:)`). Never blocks on
    /// a creation: a served name is a dictionary lookup.
    func resolve(query: String?, host: String?) -> Resolution {
        guard let (name, fromHost) = NamespaceName.named(query: query, host: host) else { return .found(primary) }
        if let found = others.withLock({ $0[name] }) { return .found(found) }
        // A host's label that names no other namespace is just a host name.
        if fromHost || defaultNames.contains(name) { return .found(primary) }
        // A namespaces file decides which names exist; without one, emulator mode creates.
        if creator != nil && !strict {
            // An invalid name is refused here, without a hop.
            if let problem = NamespaceName.problem(name) { return .refused(.invalidName(problem)) }
            return .create(name)
        }
        return strict ? .unknown(name) : .found(primary)
    }

    /// The namespace `name` (what `resolve` said to create), created with the server's rules
    /// file or its kept replaced rules; or why it was not.
    func created(_ name: String) -> Resolution {
        do throws(Creation) {
            return .found(try create(name, rules: nil))
        } catch {
            return .refused(error)
        }
    }

    /// Every namespace besides the default.
    var extras: [Namespace] {
        others.withLock { Array($0.values) }
    }

    /// Why a namespace was not created: not emulator mode, an invalid name, no room for one
    /// more (`maxNamespaces`), or its store failed to open.
    enum Creation: Error {
        case notAllowed
        case invalidName(String)
        case tooMany
        case failed(String)
    }

    /// The namespace `name`, created with `rules` (nil: its kept replaced rules, else the
    /// server's rules file) when it is not served yet (emulator mode only).
    func create(_ name: String, rules: [UInt8]?) throws(Creation) -> Namespace {
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
        // The cause (paths, the store's message) is in the server's log, not the answer.
        case .failed: APIError(503, "The namespace could not be opened", headers: APIError.storeRetryAfter)
        }
    }
}
