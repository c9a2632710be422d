import CSQLite
import HearthStore

/// A prepared statement. Finalized in `deinit`; confined to its connection's queue.
final class SQLiteStatement {
    let handle: OpaquePointer
    private unowned let connection: SQLiteConnection

    init(connection: SQLiteConnection, sql: String) throws(StoreError) {
        var stmt: OpaquePointer?
        let rc = sqlite3_prepare_v3(connection.handle, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &stmt, nil)
        guard rc == SQLITE_OK, let stmt else {
            throw connection.error(rc, "prepare")
        }
        self.handle = stmt
        self.connection = connection
    }

    deinit { sqlite3_finalize(handle) }

    /// Resets the statement and binds `values` to parameters 1...n.
    func reset(_ values: [SQLiteValue] = []) throws(StoreError) {
        sqlite3_reset(handle)
        sqlite3_clear_bindings(handle)
        for (i, value) in values.enumerated() {
            let index = Int32(i + 1)
            let rc: Int32
            switch value {
            case .null: rc = sqlite3_bind_null(handle, index)
            case .integer(let v): rc = sqlite3_bind_int64(handle, index, v)
            case .real(let v): rc = sqlite3_bind_double(handle, index, v)
            case .text(let s):
                var s = s
                rc = s.withUTF8 { utf8 in
                    utf8.withMemoryRebound(to: CChar.self) { chars in
                        guard let base = chars.baseAddress, chars.count > 0 else {
                            return sqlite3_bind_text(handle, index, "", 0, HEARTH_SQLITE_TRANSIENT)
                        }
                        return sqlite3_bind_text(handle, index, base, Int32(chars.count), HEARTH_SQLITE_TRANSIENT)
                    }
                }
            case .blob(let b) where b.isEmpty:
                rc = sqlite3_bind_zeroblob(handle, index, 0)  // a nil pointer would bind NULL
            case .blob(let b):
                rc = b.withUnsafeBytes { sqlite3_bind_blob(handle, index, $0.baseAddress, Int32($0.count), HEARTH_SQLITE_TRANSIENT) }
            }
            guard rc == SQLITE_OK else { throw connection.error(rc, "bind") }
        }
    }

    /// Advances one row: true when a row is available.
    func step() throws(StoreError) -> Bool {
        let rc = sqlite3_step(handle)
        switch rc {
        case SQLITE_ROW: return true
        case SQLITE_DONE: return false
        default: throw connection.error(rc, "step")
        }
    }

    /// Runs to completion, ignoring rows.
    ///
    /// Text and blobs are bound where they are (`SQLITE_STATIC`), not copied by SQLite as
    /// `reset(_:)` binds them: each is bound inside the closure that lends its bytes, the
    /// statement runs inside the innermost one, and the bindings are cleared before the
    /// bytes are given back (issue 30: a create binds ~12 texts on the single writer, each
    /// a `malloc`, a copy and a `free` in SQLite).
    func run(_ values: [SQLiteValue] = []) throws(StoreError) {
        sqlite3_reset(handle)
        sqlite3_clear_bindings(handle)
        defer {
            sqlite3_reset(handle)
            sqlite3_clear_bindings(handle)
        }
        try bindInPlace(values, from: 0).get()
    }

    /// Binds `values[index...]` in place, each inside the closure lending its bytes, and
    /// runs the statement inside the last one.
    private func bindInPlace(_ values: [SQLiteValue], from index: Int) -> Result<Void, StoreError> {
        guard index < values.count else {
            return Result { () throws(StoreError) in while try step() {} }
        }
        let parameter = Int32(index + 1)
        let rc: Int32
        switch values[index] {
        case .null: rc = sqlite3_bind_null(handle, parameter)
        case .integer(let v): rc = sqlite3_bind_int64(handle, parameter, v)
        case .real(let v): rc = sqlite3_bind_double(handle, parameter, v)
        case .text(let s):
            var s = s
            return s.withUTF8 { utf8 in
                utf8.withMemoryRebound(to: CChar.self) { chars in
                    // An empty text still needs a non-null pointer (a null one binds NULL).
                    let bound = chars.isEmpty
                        ? sqlite3_bind_text(handle, parameter, "", 0, HEARTH_SQLITE_TRANSIENT)
                        : sqlite3_bind_text(handle, parameter, chars.baseAddress, Int32(chars.count), HEARTH_SQLITE_STATIC)
                    guard bound == SQLITE_OK else { return .failure(connection.error(bound, "bind")) }
                    return bindInPlace(values, from: index + 1)
                }
            }
        case .blob(let b) where b.isEmpty:
            rc = sqlite3_bind_zeroblob(handle, parameter, 0)  // a nil pointer would bind NULL
        case .blob(let b):
            return b.withUnsafeBytes { bytes in
                let bound = sqlite3_bind_blob(handle, parameter, bytes.baseAddress, Int32(bytes.count), HEARTH_SQLITE_STATIC)
                guard bound == SQLITE_OK else { return .failure(connection.error(bound, "bind")) }
                return bindInPlace(values, from: index + 1)
            }
        }
        guard rc == SQLITE_OK else { return .failure(connection.error(rc, "bind")) }
        return bindInPlace(values, from: index + 1)
    }

    func columnType(_ i: Int32) -> Int32 { sqlite3_column_type(handle, i) }
    func int64(_ i: Int32) -> Int64 { sqlite3_column_int64(handle, i) }
    func double(_ i: Int32) -> Double { sqlite3_column_double(handle, i) }

    func text(_ i: Int32) -> String {
        guard let p = sqlite3_column_text(handle, i) else { return "" }
        let n = Int(sqlite3_column_bytes(handle, i))
        return String(decoding: UnsafeBufferPointer(start: p, count: n), as: UTF8.self)
    }

    /// The column's text as UTF-8 bytes, valid only inside `body` (no String is made).
    func withText<R>(_ i: Int32, _ body: (UnsafeBufferPointer<UInt8>) -> R) -> R {
        guard let p = sqlite3_column_text(handle, i) else { return body(UnsafeBufferPointer(start: nil, count: 0)) }
        return body(UnsafeBufferPointer(start: p, count: Int(sqlite3_column_bytes(handle, i))))
    }

    func blob(_ i: Int32) -> [UInt8] {
        let n = Int(sqlite3_column_bytes(handle, i))
        guard n > 0, let p = sqlite3_column_blob(handle, i) else { return [] }
        return Array(UnsafeRawBufferPointer(start: p, count: n))
    }
}

/// A value bound to a statement parameter.
enum SQLiteValue {
    case null
    case integer(Int64)
    case real(Double)
    case text(String)
    case blob([UInt8])
}
