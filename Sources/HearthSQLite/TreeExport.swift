import HearthJSON
import HearthStore

/// `TreeExport` reading the database file in a data directory directly (one read
/// transaction, beside a running server), with the same bytes as `run(engine:)`.
extension TreeExport {
    /// Exports the value at `path` of the database in `directory` to `sink`.
    public static func run(
        directory: String, at path: DataPath, sink: @escaping ([UInt8]) throws(MaintenanceError) -> Void
    ) throws(MaintenanceError) -> Summary {
        let file = directory + "/" + SQLiteTreeStore.fileName
        let connection = try DatabaseFile.openExisting(file)
        defer { connection.close() }
        try DatabaseFile.checkSchema(connection, path: file)
        try DatabaseFile.store { () throws(StoreError) in try connection.execute("BEGIN") }
        defer { try? connection.execute("COMMIT") }
        var writer = Writer(sink: sink)
        try write(connection: connection, at: path, into: &writer)
        try writer.flush()
        return Summary(leaves: writer.leaves, bytes: writer.written)
    }

    private static func write(connection: SQLiteConnection, at path: DataPath, into writer: inout Writer) throws(MaintenanceError) {
        let key = path.storageKey
        let leaf = try DatabaseFile.store { () throws(StoreError) in try SQLiteTreeView(connection: connection).leaf(at: path) }
        if let leaf {
            writer.leaf(leaf)
            return
        }
        let statement: SQLiteStatement
        let prefixLength: Int
        do {
            if path.isRoot {
                statement = try connection.statement(SQLiteTreeView.allSQL)
                try statement.reset()
                prefixLength = 0
            } else {
                let range = SQLiteTreeView.descendantRange(key)
                statement = try connection.statement(SQLiteTreeView.rangeSQL)
                try statement.reset([.text(range.lower), .text(range.upper)])
                prefixLength = range.lower.utf8.count
            }
        } catch {
            throw .store(error)
        }
        defer { try? statement.reset() }
        while try DatabaseFile.store({ () throws(StoreError) in try statement.step() }) {
            let full = statement.text(0)
            let segments = LeafRow.segments(full.utf8.dropFirst(prefixLength))
            let value = try DatabaseFile.store { () throws(StoreError) in
                try LeafRow.decode(kind: statement.int64(1), statement: statement, column: 2)
            }
            try writer.member(segments, value, fullPath: full)
            try writer.flushIfFull()
        }
        writer.finish()
    }

}
