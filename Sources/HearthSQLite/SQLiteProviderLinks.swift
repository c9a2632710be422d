import CSQLite
import HearthStore

/// The users' provider links in `provider_links`, written in the user's own
/// transaction and read with it.
extension SQLiteAccountStore {
    /// `UserRecord.columns` of `users u`, for a join.
    static let prefixedColumns = UserRecord.columns.split(separator: ",")
        .map { "u." + $0.filter { !$0.isWhitespace } }.joined(separator: ", ")

    /// `users` with their links, one query for the whole (uid-ordered) page.
    static func attachLinks(_ connection: SQLiteConnection, to users: [UserRecord]) throws -> [UserRecord] {
        guard let first = users.first?.uid, let last = users.last?.uid else { return users }
        let stmt = try connection.statement(users.count == 1
            ? "SELECT \(ProviderLink.columns) FROM provider_links WHERE uid = ? ORDER BY provider_id"
            : "SELECT \(ProviderLink.columns) FROM provider_links WHERE uid >= ? AND uid <= ? ORDER BY uid, provider_id")
        try stmt.reset(users.count == 1 ? [.text(first)] : [.text(first), .text(last)])
        defer { try? stmt.reset() }
        var links: [String: [ProviderLink]] = [:]
        while try stmt.step() {
            let link = ProviderLink(columnText: { stmt.columnType(Int32($0)) == SQLITE_NULL ? nil : stmt.text(Int32($0)) })
            links[stmt.text(0), default: []].append(link)
        }
        guard !links.isEmpty else { return users }
        return users.map { user in
            var user = user
            user.providerLinks = links[user.uid] ?? []
            return user
        }
    }

    /// Writes `user`'s links (after deleting its old ones when `replacing`).
    static func writeLinks(_ connection: SQLiteConnection, of user: UserRecord, replacing: Bool) throws {
        if replacing { try connection.statement("DELETE FROM provider_links WHERE uid = ?").run([.text(user.uid)]) }
        guard !user.providerLinks.isEmpty else { return }
        let insert = try connection.statement("INSERT INTO provider_links(\(ProviderLink.columns)) VALUES (?, ?, ?, ?, ?, ?)")
        for link in user.providerLinks {
            try insert.run(link.columnValues(uid: user.uid).map(SQLiteValue.init))
        }
    }

    /// `body` in one transaction on the writer connection.
    static func inTransaction(_ connection: SQLiteConnection, _ body: () throws -> Void) throws {
        try connection.execute("BEGIN IMMEDIATE")
        do {
            try body()
            try connection.execute("COMMIT")
        } catch {
            try? connection.execute("ROLLBACK")
            throw error
        }
    }
}

extension SQLiteValue {
    init(_ value: UserRecord.ColumnValue) {
        switch value {
        case .text(let text): self = .text(text)
        case .int(let int): self = .integer(int)
        case .null: self = .null
        }
    }
}
