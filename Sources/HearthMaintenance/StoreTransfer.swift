import HearthJSON
import HearthStore

/// Moves everything a store holds into another, empty one, through the engine protocol
/// only, so it works between any two engines: `hearth copy`, and `hearth
/// backup` / `hearth restore` of a store without a local directory (whose backup is a
/// store in `Engines.backupFormat`, the same form as a data directory's backup).
///
/// The tree is read in one snapshot and written subtree by subtree, each write at most the
/// write limit (so memory holds one write's worth, not the tree); then users, refresh tokens (nobody is signed out),
/// signing keys (ID tokens issued before keep verifying, the current key signing after)
/// and the console's administrators. The change log is not moved: streams resuming
/// afterwards start from a snapshot.
public enum StoreTransfer {
    /// Rows read per page of users and refresh tokens.
    public static let pageSize = 1_000

    public struct Summary: Sendable, Equatable, CustomStringConvertible {
        public var leaves = 0, users = 0, refreshTokens = 0, signingKeys = 0, consoleAdmins = 0
        /// Paths whose priority could not be moved (a subtree larger than one write).
        public var prioritiesNotMoved: [DataPath] = []

        public var description: String {
            "\(leaves) leaves, \(users) users, \(refreshTokens) refresh tokens, \(signingKeys) signing keys and \(consoleAdmins) console administrators"
        }
    }

    public enum Failure: Error, Sendable, CustomStringConvertible {
        case destinationNotEmpty(String)
        public var description: String {
            switch self {
            case .destinationNotEmpty(let destination): return "the destination \(destination) is not empty"
            }
        }
    }

    /// Copies `input` into `output`, which must hold no data and no user.
    public static func copy(from input: any StorageEngine, to output: any StorageEngine, destinationName: String) throws -> Summary {
        let empty = try output.readSync { try !$0.exists(at: .root) }
        guard empty, try output.accountStore.users(after: nil, limit: 1).isEmpty else {
            throw Failure.destinationNotEmpty(destinationName)
        }
        var summary = Summary()
        // One snapshot of the source for the whole tree; in memory, one write's worth at a time.
        try input.readSync { view in try copyTree(view, at: .root, to: output, summary: &summary) }
        var after: String? = nil
        while true {
            let page = try input.accountStore.users(after: after, limit: pageSize)
            for user in page { try output.accountStore.insert(user) }
            summary.users += page.count
            guard let last = page.last else { break }
            after = last.uid
        }
        after = nil
        while true {
            let page = try input.accountStore.refreshTokens(after: after, limit: pageSize)
            try output.accountStore.insertRefreshTokens(page)
            summary.refreshTokens += page.count
            guard let last = page.last else { break }
            after = last.hash
        }
        if let stored = try input.signingKeys.load() {
            // The current key last: it is the one that signs afterwards.
            for (kid, key) in stored.keys.sorted(by: { $0.key < $1.key }) where kid != stored.current {
                if !output.signingKeys.contains(kid: kid) { try output.signingKeys.add(kid: kid, privateKey: key) }
            }
            if let current = stored.keys[stored.current] { try output.signingKeys.add(kid: stored.current, privateKey: current) }
            summary.signingKeys = stored.keys.count
        }
        let admins = try input.consoleRecords.admins()
        for admin in admins { try output.consoleRecords.insert(admin) }
        summary.consoleAdmins = admins.count
        return summary
    }

    /// Copies the subtree at `path` of `view` in writes of at most the write limit: whole
    /// when it fits (with its priorities), else child by child (its own priority, which a
    /// write carries only with the node's whole value, is reported and not copied).
    private static func copyTree(_ view: any TreeView, at path: DataPath, to output: any StorageEngine, summary: inout Summary) throws {
        let limit = StoreOptions.defaultMaxNodesPerWrite
        // Leaves, counted up to one more than a write holds (priorities ride along).
        let leaves = try view.leafRows(at: path, after: nil, limit: limit + 1).count
        if leaves == 0 { return }
        if leaves <= limit {
            let value = try view.exportValue(at: path)
            let rows = WriteSize.rows(in: value, limit: limit)
            if rows <= limit || !hasChildren(value) {
                try output.writeSync(.set(WriteEntry(path: path, value: value)), check: nil)
                summary.leaves += leaves
                return
            }
        }
        if try view.priority(at: path) != nil { summary.prioritiesNotMoved.append(path) }
        for key in try view.childKeys(at: path).sorted() {
            try copyTree(view, at: try path.child(key), to: output, summary: &summary)
        }
    }

    private static func hasChildren(_ value: JSONValue) -> Bool {
        if case .object(let members) = value { return members.keys.contains { $0.string != ".priority" && $0.string != ".value" } }
        return false
    }
}
