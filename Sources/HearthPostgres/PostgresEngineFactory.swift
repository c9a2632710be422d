import HearthStore

/// How the shared engine opens: a `postgres://` or `postgresql://` URL naming its
/// database, several nodes on one database, which may be unreachable at start.
public struct PostgresEngineFactory: EngineFactory {
    public init() {}

    public var name: String { "postgres" }
    public var textForm: String { "postgres://USER:PASSWORD@HOST:PORT/DATABASE" }
    public var isShared: Bool { true }

    public func location(parsing text: String, defaultDirectory: String) throws(StoreLocation.ParseError) -> StoreLocation? {
        guard text.hasPrefix("postgres://") || text.hasPrefix("postgresql://") else { return nil }
        guard text.split(separator: "/", omittingEmptySubsequences: false).count >= 4 else {
            throw StoreLocation.ParseError(description: "store: a PostgreSQL URL names its database: \(textForm)")
        }
        return .postgres(url: text)
    }

    public func dataDirectory(of location: StoreLocation) -> String? { nil }

    public func open(_ location: StoreLocation, options: StoreOptions, hooks: EngineHooks,
                     clock: @escaping @Sendable () -> Int64) throws(StoreError) -> any StorageEngine {
        try PostgresEngine(url: location.address, options: options, clock: clock, hooks: hooks)
    }

    /// A namespace's database is a schema of its own (`hearth_ns_<name>`, hyphens as
    /// underscores), named to every connection through libpq's `options` (`search_path`):
    /// its own tables, ordering lock and change numbering, so writes to different
    /// namespaces never wait on each other. The schema is created when it is first opened.
    public func location(ofNamespace name: String, beside location: StoreLocation) -> StoreLocation {
        let schema = Self.schema(ofNamespace: name)
        let url = location.address + (location.address.contains("?") ? "&" : "?") + "options=-c%20search_path%3D" + schema
        return .postgres(url: url)
    }

    /// The schema of namespace `name`: `hearth_ns_<name>`, hyphens as underscores.
    static func schema(ofNamespace name: String) -> String {
        PostgresSchema.namespaceSchemaPrefix + String(name.map { $0 == "-" ? "_" : $0 })
    }

    /// Its schema holds Hearth's tables (`hearth_meta`, made with the schema on first
    /// open), asked on one connection to the default's database, which creates nothing.
    public func namespaceExists(_ name: String, beside location: StoreLocation) throws(StoreError) -> Bool {
        let connection = try PGConnection(url: location.address)
        return try connection.query("SELECT to_regclass($1) IS NOT NULL", [.text(Self.schema(ofNamespace: name) + ".hearth_meta")]).bool(0, 0)
    }

    /// Names the connections each node holds (`PostgresEngine.connections(for:)`).
    public func unreachableAdvice(_ options: StoreOptions) -> String? {
        let count = PostgresEngine.connections(for: options)
        return "Check that PostgreSQL runs and takes connections from this host, and that its max_connections leaves \(count) for every Hearth node: each node holds \(count) (readerCount \(max(1, options.readerCount)) + \(count - max(1, options.readerCount))); out of connections, PostgreSQL says \"too many clients\" or \"remaining connection slots are reserved\"."
    }
}
