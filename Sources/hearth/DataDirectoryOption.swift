import ArgumentParser
import HearthServer
import HearthStore
#if canImport(Glibc)
import Glibc
#endif

/// `--data-dir` and `--store`, as `hearth serve` takes them (issue 17), without a check
/// that the directory exists: for `hearth restore`, the one operator command that creates
/// a data directory (a restore onto a new machine). Every other command uses
/// `DataDirectoryOption`.
struct DataLocationOption: ParsableArguments {
    @Option(name: .customLong("data-dir"), help: "Directory holding the database file (default ./hearth-data, or HEARTH_DATA_DIR).")
    var dataDir: String?

    @Option(name: .customLong("store"), help: "sqlite:<directory> (the default: --data-dir) or postgres://USER:PASSWORD@HOST:PORT/DATABASE (or HEARTH_STORE).")
    var store: String?

    @Option(name: .customLong("ns"), help: "The namespace (issue 28, docs/namespaces.md) whose database to use; default: the default namespace's.")
    var namespace: String?

    var path: String { dataDir ?? Environment()["HEARTH_DATA_DIR"] ?? "./hearth-data" }

    /// Where the data is: the default namespace's store, or `--ns`'s beside it.
    var location: StoreLocation {
        get throws {
            let base = try serverLocation
            guard let namespace else { return base }
            if let problem = NamespaceName.problem(namespace) { throw ValidationError("--ns: \(problem)") }
            return try Engines.all.factory(for: base).location(ofNamespace: namespace, beside: base)
        }
    }

    /// The server's store (`--data-dir`, `--store`): whose data directory is locked.
    private var serverLocation: StoreLocation {
        get throws {
            do {
                return try StoreLocation(parsing: store ?? Environment()["HEARTH_STORE"] ?? "", defaultDirectory: path)
            } catch {
                throw ValidationError(error.description)
            }
        }
    }

    /// The server's local data directory (the embedded engine's; the one locked, whichever
    /// namespace is used), nil for a store whose data is elsewhere (a database server).
    var dataDirectory: String? {
        get throws {
            let location = try serverLocation
            return try Engines.all.factory(for: location).dataDirectory(of: location)
        }
    }

    /// The store's local directory and the format of its database file, nil for a store
    /// whose data is elsewhere (a database server).
    var localStore: (directory: String, format: any LocalStoreFormat)? {
        get throws {
            let location = try location
            let factory = try Engines.all.factory(for: location)
            guard let directory = factory.dataDirectory(of: location), let format = factory as? any LocalStoreFormat else { return nil }
            return (directory, format)
        }
    }

    /// Opens the engine (no streams, no hooks).
    func openEngine() throws -> any StorageEngine {
        try Engines.open(try location)
    }

    /// Takes a data directory's lock for `use` (issue 24; nil for a store with no local
    /// directory), held until released or the process ends. A conflict is refused naming
    /// the other process.
    func lock(_ use: DataDirectoryLock.Use, create: Bool = false) throws -> DataDirectoryLock? {
        guard let directory = try dataDirectory else { return nil }
        do {
            return try DataDirectoryLock.take(use, directory: directory, create: create)
        } catch {
            throw Tool.fail(error.description)
        }
    }
}

/// `--data-dir` and `--store`, shared by every operator command that opens the database
/// but `restore`. A data directory must exist: only `hearth serve` (and `hearth restore`)
/// creates one, so a mistyped path is reported instead of quietly starting an empty
/// database (with new signing keys) beside the real one.
struct DataDirectoryOption: ParsableArguments {
    @OptionGroup var given: DataLocationOption

    var path: String { given.path }
    var location: StoreLocation { get throws { try given.location } }
    var dataDirectory: String? { get throws { try given.dataDirectory } }
    var localStore: (directory: String, format: any LocalStoreFormat)? { get throws { try given.localStore } }
    func openEngine() throws -> any StorageEngine { try given.openEngine() }
    func lock(_ use: DataDirectoryLock.Use) throws -> DataDirectoryLock? { try given.lock(use) }

    func validate() throws {
        guard let path = try dataDirectory else { return }
        var info = stat()
        guard stat(path, &info) == 0 else {
            let code = errno
            if code == ENOENT {
                throw Tool.fail("data directory \(path) does not exist (only 'hearth serve' and 'hearth restore' create one; check --data-dir or HEARTH_DATA_DIR)")
            }
            throw Tool.fail("cannot use data directory \(path): \(String(cString: strerror(code)))")
        }
        guard (info.st_mode & S_IFMT) == S_IFDIR else { throw Tool.fail("data directory \(path) is not a directory") }
    }
}
