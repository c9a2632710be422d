import HearthJSON
import HearthStore

/// A page of children's values in one statement: the answers of key-order pages and of
/// indexed queries, which read one or two round trips per child before.
extension PostgresTreeView {
    /// For each key (in order), its leaf row or its descendants' rows, in path order.
    static let childValuesSQL = """
        SELECT k.i, n.path, n.kind, n.ival, n.dval, n.sval FROM unnest($1::text[]) WITH ORDINALITY AS k(p, i)
        CROSS JOIN LATERAL (
            SELECT path, kind, ival, dval, sval FROM nodes WHERE path = k.p
            UNION ALL
            SELECT path, kind, ival, dval, sval FROM nodes WHERE path >= k.p || '/' AND path < k.p || '0'
        ) AS n
        ORDER BY k.i, n.path
        """

    func childValues(_ keys: [String], at path: DataPath) throws(StoreError) -> [JSONKey: JSONValue] {
        guard !keys.isEmpty else { return [:] }
        let paths = keys.map { DataPath(uncheckedSegments: path.segments + [$0]).storageKey }
        let result = try connection.query(Self.childValuesSQL, [.text(PGArray.literal(paths))])
        var values: [JSONKey: JSONValue] = [:]
        var row = 0
        while row < result.rowCount {
            let index = Int(result.int64(row, 0)) - 1
            guard paths.indices.contains(index) else { throw .corrupt("child value row for key \(index + 1) of \(paths.count)") }
            let child = paths[index]
            var end = row
            while end < result.rowCount, result.int64(end, 0) == Int64(index + 1) { end += 1 }
            // The leaf row sorts before any descendant's, and wins as in `value(at:)`.
            if result.text(row, 1).utf8.elementsEqual(child.utf8) {
                values[JSONKey(keys[index])] = try Self.decode(result, row: row, column: 2)
            } else {
                let prefix = child.utf8.count + 1
                var rows: [(segments: ArraySlice<Substring>, value: JSONValue)] = []
                rows.reserveCapacity(end - row)
                for leaf in row..<end {
                    rows.append((LeafRow.segments(result.text(leaf, 1).utf8.dropFirst(prefix)), try Self.decode(result, row: leaf, column: 2)))
                }
                values[JSONKey(keys[index])] = LeafRow.assemble(rows)
            }
            row = end
        }
        return values
    }
}
