import HearthStore

/// The users' provider links (issue 29) in `provider_links`, written in the user's own
/// transaction and read with it.
extension PostgresAccountStore {
    /// `UserRecord.columns` of `users u`, for a join.
    static let prefixedColumns = UserRecord.columns.split(separator: ",")
        .map { "u." + $0.filter { !$0.isWhitespace } }.joined(separator: ", ")

    /// `users` with their links, one query for the whole page.
    static func attachLinks(_ connection: PGConnection, to users: [UserRecord]) throws -> [UserRecord] {
        guard !users.isEmpty else { return users }
        let r = try connection.query("SELECT \(ProviderLink.columns) FROM provider_links WHERE uid = ANY($1::text[]) ORDER BY provider_id",
                                     [.text(arrayLiteral(users.map(\.uid)))])
        guard r.rowCount > 0 else { return users }
        var links: [String: [ProviderLink]] = [:]
        for row in 0..<r.rowCount {
            links[r.text(row, 0), default: []].append(ProviderLink(columnText: { r.isNull(row, $0) ? nil : r.text(row, $0) }))
        }
        return users.map { user in
            var user = user
            user.providerLinks = links[user.uid] ?? []
            return user
        }
    }

    /// A PostgreSQL array literal of `texts` (each quoted, `\` and `"` escaped).
    static func arrayLiteral(_ texts: [String]) -> String {
        "{" + texts.map { "\"" + $0.replacing("\\", with: "\\\\").replacing("\"", with: "\\\"") + "\"" }.joined(separator: ",") + "}"
    }

    /// Writes `user`'s links (after deleting its old ones when `replacing`).
    static func writeLinks(_ connection: PGConnection, of user: UserRecord, replacing: Bool) throws {
        if replacing { _ = try connection.query("DELETE FROM provider_links WHERE uid = $1", [.text(user.uid)]) }
        for link in user.providerLinks {
            _ = try connection.query("INSERT INTO provider_links(\(ProviderLink.columns)) VALUES ($1, $2, $3, $4, $5, $6)",
                                     link.columnValues(uid: user.uid).map(PGValue.init))
        }
    }
}

extension PGValue {
    init(_ value: UserRecord.ColumnValue) {
        switch value {
        case .text(let text): self = .text(text)
        case .int(let int): self = .int(int)
        case .null: self = .null
        }
    }
}
