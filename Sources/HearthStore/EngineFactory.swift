/// How one storage engine opens: its name, the `--store` text form it takes,
/// whether its data is shared by several nodes, where its local data lives, and opening it.
/// Each engine module (HearthSQLite, HearthPostgres) has one; the composition root hands
/// the list of them to whatever parses `--store` or opens a store, so nothing above the
/// seam switches on which engines exist, and a third engine is one more factory in the list.
public protocol EngineFactory: Sendable {
    /// The engine's name: `StoreLocation.engine` and `StorageEngine.engineName`.
    var name: String { get }
    /// The `--store` form it takes, for an error naming every accepted form.
    var textForm: String { get }
    /// The location `text` names when it is this engine's form, nil when it is not (another
    /// engine's); an error when it is this engine's form but not a usable one. The first
    /// engine of a list is the default: it takes the empty text (`defaultDirectory`).
    func location(parsing text: String, defaultDirectory: String) throws(StoreLocation.ParseError) -> StoreLocation?
    /// True when several Hearth nodes may share one location (`StorageEngine.isShared`):
    /// its database may be unreachable at start, and is waited for.
    var isShared: Bool { get }
    /// The local directory the data of `location` lives in, which one process at a time
    /// may replace (`DataDirectoryLock`); nil when the data is not in a local directory.
    func dataDirectory(of location: StoreLocation) -> String?
    /// Opens the engine at `location` (one attempt).
    func open(_ location: StoreLocation, options: StoreOptions, hooks: EngineHooks,
              clock: @escaping @Sendable () -> Int64) throws(StoreError) -> any StorageEngine
    /// What an operator checks when the database cannot be reached at start, with
    /// `options`; nil for an engine whose data is always at hand.
    func unreachableAdvice(_ options: StoreOptions) -> String?
    /// Where the database of namespace `name` (a valid name: lowercase letters,
    /// digits, hyphens) lives beside the default namespace's at `location`: a database of
    /// its own (tree, change feed, indexes, onDisconnect records), opened like any other.
    func location(ofNamespace name: String, beside location: StoreLocation) -> StoreLocation
    /// Whether the database of namespace `name` beside `location` exists (a server opened
    /// it once), found without creating it: operator commands about what a server recorded
    /// in a namespace refuse one that does not exist rather than make an empty one.
    func namespaceExists(_ name: String, beside location: StoreLocation) throws(StoreError) -> Bool
}

extension [any EngineFactory] {
    /// The factory of `location`'s engine; an error when none of these is.
    public func factory(for location: StoreLocation) throws(StoreError) -> any EngineFactory {
        guard let factory = first(where: { $0.name == location.engine }) else {
            throw .engine(EngineFailure(engine: location.engine, code: "", kind: .other,
                                        message: "no storage engine named \(location.engine) in this build", operation: "open"))
        }
        return factory
    }
}

/// Where Hearth keeps its data, from one setting (`--store`, `HEARTH_STORE`): the
/// name of an engine and an address in its terms (a directory, a URL). Which engines exist
/// and how their text forms read is their factories' business (`EngineFactory`).
public struct StoreLocation: Sendable, Equatable, CustomStringConvertible {
    /// The engine's name (`EngineFactory.name`).
    public let engine: String
    /// Where, in the engine's terms: a directory, a database URL.
    public let address: String
    /// The location as an operator may see it: without a password.
    public let description: String

    public init(engine: String, address: String, description: String) {
        (self.engine, self.address, self.description) = (engine, address, description)
    }

    public struct ParseError: Error, Sendable, Equatable, CustomStringConvertible {
        public let description: String
        public init(description: String) { self.description = description }
    }

    /// Parses a `--store` value with the first of `engines` whose form it is. An empty value
    /// means the first engine's default in `defaultDirectory`.
    public init(parsing text: String, defaultDirectory: String, engines: [any EngineFactory]) throws(ParseError) {
        for factory in engines {
            if let location = try factory.location(parsing: text, defaultDirectory: defaultDirectory) {
                self = location
                return
            }
        }
        throw ParseError(description: "store: expected " + engines.map(\.textForm).joined(separator: " or "))
    }

    /// The spellings of the locations of the engines this repository ships (their factories
    /// make them so): `sqlite:<directory>` and a PostgreSQL URL, shown without its password.
    public static func sqlite(directory: String) -> StoreLocation {
        StoreLocation(engine: "sqlite", address: directory, description: "sqlite:" + directory)
    }

    public static func postgres(url: String) -> StoreLocation {
        StoreLocation(engine: "postgres", address: url, description: redacted(url))
    }

    /// `url` with the password between `user:` and `@` replaced by `***`.
    public static func redacted(_ url: String) -> String {
        let parts = url.split(separator: "/", maxSplits: 3, omittingEmptySubsequences: false)
        guard parts.count >= 3, parts[0].hasSuffix(":"), parts[1].isEmpty else { return url }
        let authority = parts[2]
        guard let at = authority.lastIndex(of: "@") else { return url }
        let credentials = authority[..<at]
        guard let colon = credentials.firstIndex(of: ":") else { return url }
        let redacted = String(credentials[..<colon]) + ":***" + authority[at...]
        return ([String(parts[0]), "", redacted] + parts.dropFirst(3).map(String.init)).joined(separator: "/")
    }
}
