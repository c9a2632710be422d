import HearthJSON
import HearthStore

/// The users' provider links in `provider_links`, written in the user's own
/// transaction and read with it.
extension PostgresAccountStore {
    /// `UserRecord.columns` of `users u`, for a join.
    static let prefixedColumns = UserRecord.columns.split(separator: ",")
        .map { "u." + $0.filter { !$0.isWhitespace } }.joined(separator: ", ")

    /// `UserRecord.columns` of `users u`, then its links as a JSON array of
    /// `[provider_id, raw_id, email, display_name, photo_url]` (NULL without any), column
    /// `linksColumn`.
    static let columnsWithLinks = prefixedColumns + """
        , (SELECT json_agg(json_build_array(l.provider_id, l.raw_id, l.email, l.display_name, l.photo_url) ORDER BY l.provider_id)
           FROM provider_links l WHERE l.uid = u.uid)
        """
    static let linksColumn = 13

    /// The links of a `columnsWithLinks` row's last column.
    static func links(json text: String) throws -> [ProviderLink] {
        guard case .array(let rows)? = try? JSONParser.parse(Array(text.utf8)) else { throw StoreError.corrupt("provider links of a user") }
        return try rows.map { row in
            guard case .array(let fields) = row, fields.count == 5, let provider = fields[0].stringValue, let raw = fields[1].stringValue else {
                throw StoreError.corrupt("provider links of a user")
            }
            return ProviderLink(providerID: provider, rawID: raw, email: fields[2].stringValue, displayName: fields[3].stringValue,
                                photoURL: fields[4].stringValue)
        }
    }

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
