import ArgumentParser
import HearthServer
import HearthStore
import HearthSystem
#if canImport(Glibc)
import Glibc
#endif

/// `--data-dir` and `--store`, as `hearth serve` takes them: the server's store,
/// whose data directory is the one locked whichever namespace a command works on.
struct ServerStoreOption: ParsableArguments {
    @Option(name: .customLong("data-dir"), help: "Directory holding the database file (default ./hearth-data, or HEARTH_DATA_DIR).")
    var dataDir: String?

    @Option(name: .customLong("store"), help: "sqlite:<directory> (the default: --data-dir) or postgres://USER:PASSWORD@HOST:PORT/DATABASE (or HEARTH_STORE).")
    var store: String?

    var path: String { dataDir ?? Environment()["HEARTH_DATA_DIR"] ?? "./hearth-data" }

    /// The server's store: the default namespace's.
    var location: StoreLocation {
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
            let location = try location
            return try Engines.all.factory(for: location).dataDirectory(of: location)
        }
    }

    /// Takes the data directory's lock for `use` (nil for a store with no local
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

    /// Refuses a data directory that does not exist: only `hearth serve` (and `hearth
    /// restore`) creates one, so a mistyped path is reported instead of quietly starting an
    /// empty database (with new signing keys) beside the real one.
    func requireDataDirectory() throws {
        guard let path = try dataDirectory else { return }
        let found: stat?
        do throws(SystemError) {
            found = try Syscall.status(path)
        } catch {
            throw Tool.fail("cannot use data directory \(path): \(String(cString: strerror(error.errno)))")
        }
        guard let info = found else {
            throw Tool.fail("data directory \(path) does not exist (only 'hearth serve' and 'hearth restore' create one; check --data-dir or HEARTH_DATA_DIR)")
        }
        guard (info.st_mode & S_IFMT) == S_IFDIR else { throw Tool.fail("data directory \(path) is not a directory") }
    }
}

/// `--data-dir`, `--store` and `--ns`, without a check that the directory exists: for
/// `hearth restore`, the one operator command that creates a data directory (a restore
/// onto a new machine). Every other command on a database uses `DataDirectoryOption`.
struct DataLocationOption: ParsableArguments {
    @OptionGroup var server: ServerStoreOption

    @Option(name: .customLong("ns"), help: "The namespace (docs/namespaces.md) whose database to use; default: the default namespace's.")
    var namespace: String?

    var path: String { server.path }
    var dataDirectory: String? { get throws { try server.dataDirectory } }

    /// Where the data is: the default namespace's store, or `--ns`'s beside it.
    var location: StoreLocation {
        get throws {
            let base = try server.location
            guard let namespace else { return base }
            if let problem = NamespaceName.problem(namespace) { throw ValidationError("--ns: \(problem)") }
            return try Engines.all.factory(for: base).location(ofNamespace: namespace, beside: base)
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

    func lock(_ use: DataDirectoryLock.Use, create: Bool = false) throws -> DataDirectoryLock? {
        try server.lock(use, create: create)
    }

    /// Refuses `--ns` naming a namespace whose database does not exist (the server makes
    /// it when it first opens the namespace), without creating it: for commands that read
    /// or change what a running server recorded there. No `--ns`: nothing to check.
    func requireNamespace() throws {
        guard let namespace else { return }
        let base = try server.location
        if let problem = NamespaceName.problem(namespace) { throw ValidationError("--ns: \(problem)") }
        guard try Engines.all.factory(for: base).namespaceExists(namespace, beside: base) else {
            throw Tool.fail("no namespace \(namespace) in \(base.description): a namespace's database is made when a server opens it (listed in its namespaces file, or created in emulator mode); check --ns")
        }
    }
}

/// `--data-dir`, `--store` and `--ns`, shared by every operator command that opens a
/// namespace's database but `restore`. The data directory must exist
/// (`ServerStoreOption.requireDataDirectory`).
struct DataDirectoryOption: ParsableArguments {
    @OptionGroup var given: DataLocationOption

    var path: String { given.path }
    var location: StoreLocation { get throws { try given.location } }
    var dataDirectory: String? { get throws { try given.dataDirectory } }
    var localStore: (directory: String, format: any LocalStoreFormat)? { get throws { try given.localStore } }
    func openEngine() throws -> any StorageEngine { try given.openEngine() }
    func lock(_ use: DataDirectoryLock.Use) throws -> DataDirectoryLock? { try given.lock(use) }
    var namespace: String? { given.namespace }
    func requireNamespace() throws { try given.requireNamespace() }

    /// A bad `--ns` is a usage error, found before the data directory is looked at.
    func validate() throws {
        if let namespace, let problem = NamespaceName.problem(namespace) { throw ValidationError("--ns: \(problem)") }
        try given.server.requireDataDirectory()
    }
}

/// `--data-dir` and `--store` of the commands on what is per server, not per database:
/// users, console administrators, signing keys and the tokens they sign. They are kept
/// in the default namespace's store, the one the server reads them from, so `--ns` is
/// refused with that reason (it would otherwise write accounts where no server looks).
/// The data directory must exist (`ServerStoreOption.requireDataDirectory`).
struct AccountsDataOption: ParsableArguments {
    @OptionGroup var server: ServerStoreOption

    /// Taken only to be refused with a reason (an unknown option would say nothing of why).
    @Option(name: .customLong("ns"), help: .hidden)
    var namespace: String?

    /// Why `--ns` is refused, and what to do instead.
    static let namespaceRefusal = "--ns is not taken here: users, administrators, signing keys and tokens are per server, "
        + "shared by every namespace and kept with the default namespace's data; leave out --ns"

    var path: String { server.path }
    func openEngine() throws -> any StorageEngine { try Engines.open(try server.location) }
    func lock(_ use: DataDirectoryLock.Use) throws -> DataDirectoryLock? { try server.lock(use) }

    func validate() throws {
        if namespace != nil { throw ValidationError(Self.namespaceRefusal) }
        try server.requireDataDirectory()
    }
}
