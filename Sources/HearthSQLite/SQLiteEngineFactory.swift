import HearthStore

/// How the embedded engine opens (issue 26): `sqlite:<directory>` (the default, also for an
/// empty `--store`), one node, its data in a local directory.
public struct SQLiteEngineFactory: EngineFactory {
    public init() {}

    public var name: String { "sqlite" }
    public var textForm: String { "sqlite:<directory>" }
    public var isShared: Bool { false }

    public func location(parsing text: String, defaultDirectory: String) throws(StoreLocation.ParseError) -> StoreLocation? {
        if text.isEmpty { return .sqlite(directory: defaultDirectory) }
        guard text.hasPrefix("sqlite:") else { return nil }
        let directory = String(text.dropFirst("sqlite:".count))
        return .sqlite(directory: directory.isEmpty ? defaultDirectory : directory)
    }

    public func dataDirectory(of location: StoreLocation) -> String? { location.address }

    public func open(_ location: StoreLocation, options: StoreOptions, hooks: EngineHooks,
                     clock: @escaping @Sendable () -> Int64) throws(StoreError) -> any StorageEngine {
        try SQLiteTreeStore(directory: location.address, options: options, clock: clock, hooks: hooks)
    }

    public func unreachableAdvice(_ options: StoreOptions) -> String? { nil }
}
