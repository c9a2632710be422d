import HearthHTTP
import HearthJSON

/// The console's namespaces: every console call on a database (its data through `rest`,
/// its rules with their history and the simulator, its triggers) names the namespace in
/// `ns` (absent: the default) and acts on that namespace's core only. Administrators,
/// sessions, app users and metrics are the server's: `ns` on their calls is refused. A
/// name not served is 404 and creates nothing, whatever the server's mode (in emulator
/// mode a REST request may create a namespace; the console never does). The host's first
/// label is not read: the session is the server's, whichever host the page came from.
///
/// - `GET /console/api/namespaces` → `{"namespaces": [{"name": "", "default": true}, {"name": "shop", "default": false}]}`
///   (the default first, as `""`, then the others by name).
extension ConsoleRoute {
    /// The route a call acts through, or why it is refused.
    enum Scope {
        case route(ConsoleRoute)
        case refused(HTTPResponse)
    }

    /// The route over the namespace `request`'s `ns` names: this one (the default's) when
    /// none is named.
    func scoped(to request: HTTPRequest) -> Scope {
        let given = Self.namespaceParameters(request.query)
        guard let first = given.first else { return .route(self) }
        guard given.count == 1 else { return .refused(Self.error(400, "ns is given more than once")) }
        let name = String(first)
        if let problem = NamespaceName.problem(name) { return .refused(Self.error(400, problem)) }
        guard let namespaces, let namespace = namespaces.namespace(named: name) else {
            return .refused(Self.error(404, "Namespace \"\(name)\" is not served here"))
        }
        if namespace === namespaces.primary { return .route(self) }
        return .route(ConsoleRoute(accounts: accounts, context: namespace.context, namespaces: namespaces, namespace: name))
    }

    /// Every `ns` value of `query`, raw (a valid name has nothing to escape); `ns` without
    /// `=` is an empty one.
    static func namespaceParameters(_ query: String?) -> [Substring] {
        guard let query else { return [] }
        return query.split(separator: "&").compactMap { pair in
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            guard parts[0] == "ns" else { return nil }
            return parts.count == 2 ? parts[1] : ""
        }
    }

    /// `GET /console/api/namespaces`: the picker's choices.
    func namespaceList() -> HTTPResponse {
        let others = namespaces?.all.filter { $0 !== namespaces?.primary }.map(\.name) ?? []
        let entries: [JSONValue] = [.object(["name": "", "default": true])]
            + others.map { .object(["name": .string($0), "default": false]) }
        return Self.json(.object(["namespaces": .array(entries)]))
    }
}
