import ArgumentParser
#if canImport(Glibc)
import Glibc
#endif
import HearthJSON
import HearthServer
import HearthStore

/// `hearth copy`: moves a whole store to another engine (issue 17), e.g. SQLite to
/// PostgreSQL, with the servers stopped: the tree with its priorities, users with their
/// refresh tokens (nobody is signed out), the signing keys (ID tokens issued before keep
/// verifying) and the console's administrators.
struct Copy: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Copy everything from one store to another (e.g. SQLite to PostgreSQL), with the servers stopped.",
        discussion: """
            The destination must be empty. The tree is copied subtree by subtree, each in \
            one write of at most the write limit (a subtree larger than it is copied child \
            by child); then users, refresh tokens, signing keys and console administrators. \
            The change log is not copied: streams resuming afterwards start from a snapshot. \
            Example: hearth copy --from sqlite:./hearth-data --to postgres://hearth:PASSWORD@db:5432/hearth
            """)

    @Option(help: "The store to copy from: sqlite:<directory> or postgres://...") var from: String
    @Option(help: "The store to copy into (empty): sqlite:<directory> or postgres://...") var to: String

    /// Rows read per page of users and refresh tokens.
    static let pageSize = 1_000

    func run() throws {
        let source: StoreLocation, destination: StoreLocation
        do {
            source = try StoreLocation(parsing: from, defaultDirectory: "")
            destination = try StoreLocation(parsing: to, defaultDirectory: "")
        } catch {
            throw ValidationError(error.description)
        }
        guard source != destination else { throw ValidationError("--from and --to are the same store") }
        // Opening a SQLite store creates it: a mistyped source would copy nothing.
        if case .sqlite(let directory) = source, access(directory + "/" + SQLiteTreeStore.fileName, F_OK) != 0 {
            throw Tool.fail("no SQLite store in \(directory) (no \(SQLiteTreeStore.fileName))")
        }
        try Tool.run {
            let input = try Engines.open(source)
            defer { input.close() }
            let output = try Engines.open(destination)
            defer { output.close() }
            let empty = try output.readSync { try !$0.exists(at: .root) }
            guard empty, try output.accountStore.users(after: nil, limit: 1).isEmpty else {
                throw Tool.fail("the destination \(destination) is not empty")
            }
            let leaves = try copyTree(at: .root, from: input, to: output)
            var users = 0, tokens = 0
            var after: String? = nil
            while true {
                let page = try input.accountStore.users(after: after, limit: Self.pageSize)
                for user in page { try output.accountStore.insert(user) }
                users += page.count
                guard let last = page.last else { break }
                after = last.uid
            }
            after = nil
            while true {
                let page = try input.accountStore.refreshTokens(after: after, limit: Self.pageSize)
                try output.accountStore.insertRefreshTokens(page)
                tokens += page.count
                guard let last = page.last else { break }
                after = last.hash
            }
            var keys = 0
            if let stored = try input.signingKeys.load() {
                // The current key last: it is the one that signs afterwards.
                for (kid, key) in stored.keys.sorted(by: { $0.key < $1.key }) where kid != stored.current {
                    if !output.signingKeys.contains(kid: kid) { try output.signingKeys.add(kid: kid, privateKey: key) }
                }
                if let current = stored.keys[stored.current] { try output.signingKeys.add(kid: stored.current, privateKey: current) }
                keys = stored.keys.count
            }
            let admins = try input.consoleRecords.admins()
            for admin in admins { try output.consoleRecords.insert(admin) }
            print("copied \(leaves) leaves, \(users) users, \(tokens) refresh tokens, \(keys) signing keys and \(admins.count) console administrators from \(source) to \(destination)")
        }
    }

    /// Copies the subtree at `path` in writes of at most the write limit; returns the leaves.
    private func copyTree(at path: DataPath, from input: any StorageEngine, to output: any StorageEngine) throws -> Int {
        let value = try input.readSync { try $0.exportValue(at: path) }
        if value == .null { return 0 }
        let rows = WriteSize.rows(in: value, limit: StoreOptions.defaultMaxNodesPerWrite)
        if rows <= StoreOptions.defaultMaxNodesPerWrite || !Self.hasChildren(value) {
            try output.writeSync(.set(WriteEntry(path: path, value: value)), check: nil)
            return rows
        }
        var total = 0
        guard case .object(let members) = value else { return 0 }
        if members[".priority"] != nil {
            // A write carries a node's priority only with the node's whole value.
            print("warning: the priority of \(path) is not copied (its subtree is larger than one write)")
        }
        for key in members.keys where key.string != ".priority" {
            total += try copyTree(at: try path.child(key.string), from: input, to: output)
        }
        return total
    }

    private static func hasChildren(_ value: JSONValue) -> Bool {
        if case .object(let members) = value { return members.keys.contains { $0.string != ".priority" && $0.string != ".value" } }
        return false
    }
}
