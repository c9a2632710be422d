import CSQLite
import HearthStore

/// SQLite 3.40.0 to 3.41.0 (Debian 12 ships 3.40.1) report "NULL value in T.C" from
/// `PRAGMA integrity_check` and `quick_check` for a NOT NULL column C of a `WITHOUT ROWID`
/// table T that is declared before one of T's primary-key columns, although no row holds
/// NULL there (a read of the same rows returns none; SQLite 3.51 checks the same
/// file "ok"). Hearth's `query_index` had that shape until schema 9 rebuilt it with its key
/// first; a database or backup written before then still has it. For such a file, and for
/// exactly those lines, the claim is checked with a query instead of believed.
enum IntegrityReport {
    /// The table, and its columns declared before a primary-key column, up to schema 8.
    static let affectedTable = "query_index"
    static let affectedColumns: Set<String> = ["rank", "value", "key_order"]

    /// The columns named by the report when every line is that false positive's form on
    /// `affectedTable`; empty when any line is anything else (then the report stands).
    static func falsePositiveColumns(_ lines: [String]) -> Set<String> {
        let prefix = "NULL value in \(affectedTable)."
        var columns: Set<String> = []
        for line in lines {
            guard line.hasPrefix(prefix) else { return [] }
            let column = String(line.dropFirst(prefix.count))
            guard affectedColumns.contains(column) else { return [] }
            columns.insert(column)
        }
        return columns
    }

    /// Whether the table still has the old shape (a key column declared after the named
    /// ones) and no row holds NULL in any of `columns`.
    static func holdsNoNull(_ connection: SQLiteConnection, columns: Set<String>) throws(StoreError) -> Bool {
        // The shape: child_key (part of the key) is declared after rank, value, key_order.
        let info = try connection.statement("SELECT name, pk FROM pragma_table_info('\(affectedTable)')")
        try info.reset()
        defer { sqlite3_reset(info.handle) }
        var names: [String] = []
        var keyPositions: [Int] = []
        while try info.step() {
            names.append(info.text(0))
            if info.int64(1) > 0 { keyPositions.append(names.count - 1) }
        }
        let lastKey = keyPositions.max() ?? -1
        guard columns.allSatisfy({ column in names.firstIndex(of: column).map { $0 < lastKey } ?? false }) else { return false }
        let condition = columns.sorted().map { "\($0) IS NULL" }.joined(separator: " OR ")
        return try connection.scalarInt("SELECT count(*) FROM \(affectedTable) WHERE \(condition)") == 0
    }
}
