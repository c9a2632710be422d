import ArgumentParser
import Foundation
import HearthJSON
import HearthMaintenance
import HearthServer
import HearthStore
import HearthSystem

/// `hearth copy`: moves a whole store to another engine, e.g. SQLite to
/// PostgreSQL, with the servers stopped: the tree with its priorities, users with their
/// refresh tokens (nobody is signed out), the signing keys (ID tokens issued before keep
/// verifying) and the console's administrators.
struct Copy: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Copy everything from one store to another (e.g. SQLite to PostgreSQL), with the servers stopped.",
        discussion: """
            The destination must be empty. The tree is read in one snapshot and copied \
            subtree by subtree, each in one write of at most the write limit (a subtree \
            larger than it is copied child by child); then users, refresh tokens, signing keys and console administrators. \
            The change log is not copied: streams resuming afterwards start from a snapshot. \
            Example: hearth copy --from sqlite:./hearth-data --to postgres://hearth:PASSWORD@db:5432/hearth
            """)

    @Option(help: "The store to copy from: sqlite:<directory> or postgres://...") var from: String
    @Option(help: "The store to copy into (empty): sqlite:<directory> or postgres://...") var to: String
    @Option(name: .customLong("ns"), help: "Copy this namespace's database (docs/namespaces.md) instead of the default namespace's.")
    var namespace: String?

    func run() throws {
        var source: StoreLocation, destination: StoreLocation
        do {
            source = try StoreLocation(parsing: from, defaultDirectory: "")
            destination = try StoreLocation(parsing: to, defaultDirectory: "")
        } catch {
            throw ValidationError(error.description)
        }
        // The server's store of the destination: the one whose data directory is locked.
        let server = destination
        if let namespace {
            if let problem = NamespaceName.problem(namespace) { throw ValidationError("--ns: \(problem)") }
            source = try Engines.all.factory(for: source).location(ofNamespace: namespace, beside: source)
            destination = try Engines.all.factory(for: destination).location(ofNamespace: namespace, beside: destination)
        }
        guard source != destination else { throw ValidationError("--from and --to are the same store") }
        // Opening a store in a data directory creates it: a mistyped source would copy nothing.
        if let factory = try? Engines.all.factory(for: source), let format = factory as? any LocalStoreFormat,
           let directory = factory.dataDirectory(of: source), !Syscall.exists(directory + "/" + format.databaseFileName) {
            throw Tool.fail("no SQLite store in \(directory) (no \(format.databaseFileName))")
        }
        try Tool.run {
            // A data directory destination is written like an import: alone.
            var lock: DataDirectoryLock?
            if let directory = try Engines.all.factory(for: server).dataDirectory(of: server) {
                lock = try DataDirectoryLock.take(.replacesData, directory: directory, create: true)
                if let own = try Engines.all.factory(for: destination).dataDirectory(of: destination), own != directory {
                    try FileManager.default.createDirectory(atPath: own, withIntermediateDirectories: true)  // namespaces/<name>
                }
            }
            defer { lock?.release() }
            let input = try Engines.open(source)
            defer { input.close() }
            let output = try Engines.open(destination)
            defer { output.close() }
            let summary = try StoreTransfer.copy(from: input, to: output, destinationName: destination.description)
            for path in summary.prioritiesNotMoved {
                print("warning: the priority of \(path) is not copied (its subtree is larger than one write)")
            }
            print("copied \(summary) from \(source) to \(destination)")
        }
    }
}
