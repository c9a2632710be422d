import HearthStore

/// What a connection is opened and used with: isolation levels, the libpq settings added to
/// a store's URL, channel names (`PGConnection`).
extension PGConnection {
    /// A transaction's isolation level.
    enum Isolation: Sendable {
        case readCommitted, repeatableRead, serializable

        var sql: String {
            switch self {
            case .readCommitted: return "READ COMMITTED"
            case .repeatableRead: return "REPEATABLE READ"
            case .serializable: return "SERIALIZABLE"
            }
        }
    }

    /// libpq settings added to the store's URL unless it names them: without them a server
    /// that vanished (a partition, a host that died without closing its sockets) is
    /// noticed only after TCP's defaults, hours on Linux, while a statement hangs. With
    /// them: a connection attempt gives up after `connectTimeoutSeconds`, data unacknowledged for 30 s ends
    /// the connection, and an idle connection is probed after 10 s (3 probes, 5 s apart).
    static let connectionDefaults: [(key: String, value: String)] = [
        ("connect_timeout", String(connectTimeoutSeconds)), ("tcp_user_timeout", "30000"),
        ("keepalives", "1"), ("keepalives_idle", "10"), ("keepalives_interval", "5"), ("keepalives_count", "3"),
    ]

    /// `url` (a `postgres://` URL or a `key=value` connection string) with the
    /// `connectionDefaults` it does not name itself.
    static func withDefaults(_ url: String) -> String {
        let isURI = url.hasPrefix("postgres://") || url.hasPrefix("postgresql://")
        let named: Set<String>
        if isURI {
            let query = url.split(separator: "?", maxSplits: 1).dropFirst().first ?? ""
            named = Set(query.split(separator: "&").map { String($0.split(separator: "=", maxSplits: 1).first ?? "") })
        } else {
            named = Set(url.split(separator: " ").compactMap { $0.contains("=") ? String($0.split(separator: "=", maxSplits: 1)[0]) : nil })
        }
        let added = connectionDefaults.filter { !named.contains($0.key) }
        if added.isEmpty { return url }
        if isURI {
            return url + (url.contains("?") ? "&" : "?") + added.map { "\($0.key)=\($0.value)" }.joined(separator: "&")
        }
        return url + " " + added.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
    }

    /// Throws unless `channel` is lowercase letters, digits and `_`, not starting with a
    /// digit, at most 63 bytes: safe to write into SQL text unquoted or between quotes.
    static func validate(channel: String) throws(StoreError) {
        let bytes = Array(channel.utf8)
        let valid = !bytes.isEmpty && bytes.count <= 63 && bytes.enumerated().allSatisfy { index, byte in
            byte == UInt8(ascii: "_") || (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte)
                || (index > 0 && (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte))
        }
        guard valid else {
            throw PGFailure.make(code: "42602", kind: .other, message: "invalid channel name (want [a-z_][a-z0-9_]*, at most 63 bytes)", operation: "listen")
        }
    }
}
