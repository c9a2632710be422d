import HearthJSON
import HearthStore

/// Replaces the value at a path with a JSON document read as a stream (a Firebase export,
/// or Hearth's own), leaf by leaf, so memory stays bounded by the reader's limits and
/// SQLite's page cache whatever the document's size.
///
/// * Validated as the REST API validates a `PUT` (`FirebaseTree.normalize`): every key
///   (`DataPath` rules), the depth, string lengths, with the full path in the error;
///   `null`, `{}` and `[]` write nothing; arrays become integer-keyed objects; integral
///   doubles within ±2^53 become integers. Differences: a server value (`.sv`) is refused
///   (there is no write to resolve it for), and a key that appears twice in one object is
///   refused instead of the last one winning.
/// * One transaction: on any error nothing is written.
/// * Offline: the database is held exclusively (`DatabaseFile.openExclusive`), so the
///   import is refused while a server (or any other process) has it open: a running
///   server's streams and query indexes would not hear of it.
/// * The change log gets no record of the import (a stream resuming across it would be
///   sent the whole document): the log is emptied and its sequence moved on by one, so
///   every stream that resumes afterwards starts from a fresh snapshot. Query indexes at,
///   above or below the path are dropped; they are rebuilt on the next query.
public enum TreeImport {
    /// SQLite's page cache for the import, in KiB. Pages beyond it spill to the WAL, so
    /// this bounds the database side of the import's memory.
    public static let cacheKiB = 32 * 1024

    public struct Summary: Sendable, Equatable {
        /// Leaves written.
        public var leaves: Int
        /// The change-log sequence after the import.
        public var seq: Int64
    }

    /// Imports the document `reader` reads at `path` of the database in `directory`
    /// (created if needed).
    public static func run(directory: String, at path: DataPath, reader: inout JSONStreamReader) throws(MaintenanceError) -> Summary {
        try LocalFiles.makeDirectory(directory)
        let file = directory + "/" + SQLiteTreeStore.fileName
        let connection = try DatabaseFile.openExclusive(file)
        defer { connection.close() }
        do {
            try connection.execute("PRAGMA journal_mode = WAL")
            try connection.execute("PRAGMA synchronous = FULL")
            try connection.execute("PRAGMA cache_size = -\(cacheKiB)")
            try connection.execute("PRAGMA foreign_keys = ON")
            try Schema.migrate(connection)
        } catch {
            if case .schemaTooNew(let found, let known) = error { throw .schemaTooNew(found: found, known: known) }
            throw .store(error)
        }
        try DatabaseFile.checkSchema(connection, path: file)
        return try DatabaseFile.inTransaction(connection) { () throws(MaintenanceError) in
            var importer = try Importer(connection: connection, base: path)
            try importer.consume(&reader)
            let seq = try DatabaseFile.store { () throws(StoreError) in
                try importer.dropQueryIndexes()
                return try DatabaseFile.resetChangeLog(connection, after: 0, gap: 1)
            }
            return Summary(leaves: importer.leaves, seq: seq)
        }
    }
}

/// One import's walk over the events, inside the transaction.
private struct Importer {
    let connection: SQLiteConnection
    let base: DataPath
    let insert: SQLiteStatement
    var frames: [Frame] = []
    var leaves = 0
    var ancestorsCleared = false

    /// An open object or array.
    struct Frame {
        var isObject: Bool
        /// The container's storage key.
        var key: String
        /// Its number of segments.
        var depth: Int
        /// Arrays: the next element's index.
        var nextIndex = 0
        /// Objects: the greatest key so far (UTF-8 order). A key above it cannot repeat an
        /// earlier one; only others are looked up.
        var greatestKey: String?
        /// Objects: the key whose value comes next.
        var pendingKey = ""
    }

    init(connection: SQLiteConnection, base: DataPath) throws(MaintenanceError) {
        self.connection = connection
        self.base = base
        insert = try DatabaseFile.store { () throws(StoreError) in try connection.statement(TreeWriter.insertSQL) }
        // What was at the path goes; its ancestors' leaves go with the first new leaf.
        try DatabaseFile.store { () throws(StoreError) in
            var writer = TreeWriter(connection: connection)
            try writer.apply(WriteEntry(path: base, value: nil))
        }
    }

    mutating func consume(_ reader: inout JSONStreamReader) throws(MaintenanceError) {
        while true {
            let event: JSONStreamReader.Event?
            do {
                event = try reader.next()
            } catch {
                throw .json(error)
            }
            guard let event else { return }
            switch event {
            case .key(let key):
                try memberKey(key)
            case .value(let scalar):
                let target = try nextTarget()
                if scalar != .null { try insertLeaf(scalar, at: target) }
            case .objectStart, .arrayStart:
                let target = try nextTarget()
                frames.append(Frame(isObject: event == .objectStart, key: target.key, depth: target.depth))
            case .objectEnd, .arrayEnd:
                frames.removeLast()
            }
        }
    }

    /// Where the next value goes: the import's path, the pending key, or the next index.
    private mutating func nextTarget() throws(MaintenanceError) -> (key: String, depth: Int) {
        guard let frame = frames.last else { return (base.storageKey, base.count) }
        let name: String
        if frame.isObject {
            name = frame.pendingKey
        } else {
            try checkChildDepth(frame)
            name = String(frame.nextIndex)
            frames[frames.count - 1].nextIndex += 1
        }
        return (Self.child(frame.key, name), frame.depth + 1)
    }

    /// A member key of the innermost object, checked as `FirebaseTree.normalize` checks it.
    private mutating func memberKey(_ key: String) throws(MaintenanceError) {
        let index = frames.count - 1
        let frame = frames[index]
        try checkChildDepth(frame)
        if key.utf8.first == UInt8(ascii: ".") {
            let under = Self.path(frame.key)
            switch key {
            case ".sv": throw .serverValue(under: under)
            case ".priority", ".value": throw .tree(.unsupportedPseudoKey(key: key, under: under))
            default: throw .tree(.invalidKey(key: key, problem: .forbiddenCharacter("."), under: under))
            }
        }
        do {
            try DataPath.validateKey(key)
        } catch {
            if case .invalidKey(_, let problem) = error { throw .tree(.invalidKey(key: key, problem: problem, under: Self.path(frame.key))) }
            throw .tree(.invalidKey(key: key, problem: .empty, under: Self.path(frame.key)))
        }
        if let greatest = frame.greatestKey, !greatest.utf8.lexicographicallyPrecedes(key.utf8) {
            let child = Self.path(Self.child(frame.key, key))
            let taken = try DatabaseFile.store { () throws(StoreError) in try SQLiteTreeView(connection: connection).exists(at: child) }
            if taken { throw .duplicateKey(at: child) }
        } else {
            frames[index].greatestKey = key
        }
        frames[index].pendingKey = key
    }

    private func checkChildDepth(_ frame: Frame) throws(MaintenanceError) {
        guard frame.depth < DataPath.maxSegments else {
            throw .tree(.tooDeep(depth: frame.depth + 1, under: Self.path(frame.key)))
        }
    }

    private mutating func insertLeaf(_ scalar: JSONValue, at target: (key: String, depth: Int)) throws(MaintenanceError) {
        let value: JSONValue
        do {
            guard let normal = try FirebaseTree.normalize(scalar, at: .root) else { return }
            value = normal
        } catch {
            if case .stringTooLong(let bytes, _) = error { throw .tree(.stringTooLong(bytes: bytes, at: Self.path(target.key))) }
            if case .invalidNumber = error { throw .tree(.invalidNumber(at: Self.path(target.key))) }
            throw .tree(error)
        }
        if !ancestorsCleared {
            ancestorsCleared = true
            var ancestor = base
            while let parent = ancestor.parent {
                ancestor = parent
                try DatabaseFile.store { () throws(StoreError) in
                    try connection.statement(TreeWriter.deleteExactSQL).run([.text(ancestor.storageKey)])
                }
            }
        }
        let row = LeafRow(path: target.key, value: value)
        do {
            try insert.run([.text(row.path), .integer(row.kind.rawValue), row.sqliteValue])
        } catch {
            if let code = error.sqliteCode, code == 1555 || code == 2067 { throw .duplicateKey(at: Self.path(target.key)) }
            throw .store(error)
        }
        leaves += 1
    }

    /// Drops the query indexes the import may have made stale: at, below and above the path.
    func dropQueryIndexes() throws(StoreError) {
        for table in ["query_index", "query_index_built"] {
            if base.isRoot {
                try connection.execute("DELETE FROM \(table)")
                continue
            }
            let key = base.storageKey
            let range = SQLiteTreeView.descendantRange(key)
            try connection.statement("DELETE FROM \(table) WHERE location = ? OR (location >= ? AND location < ?)")
                .run([.text(key), .text(range.lower), .text(range.upper)])
            var ancestor = base
            while let parent = ancestor.parent {
                ancestor = parent
                try connection.statement("DELETE FROM \(table) WHERE location = ?").run([.text(ancestor.storageKey)])
            }
        }
    }

    private static func child(_ parent: String, _ key: String) -> String {
        parent.isEmpty ? key : parent + "/" + key
    }

    /// A storage key as a path (for errors and the rare duplicate lookup).
    private static func path(_ key: String) -> DataPath {
        key.isEmpty ? .root : DataPath(uncheckedSegments: key.split(separator: "/", omittingEmptySubsequences: false).map(String.init))
    }
}
