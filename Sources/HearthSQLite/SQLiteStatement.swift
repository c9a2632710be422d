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

    /// Resets the statement and binds `values` to parameters 1...n (copied by SQLite: the
    /// caller steps after this returns).
    func reset(_ values: [SQLiteValue] = []) throws(StoreError) {
        sqlite3_reset(handle)
        sqlite3_clear_bindings(handle)
        for (i, value) in values.enumerated() {
            let rc = bind(value, at: Int32(i + 1), HEARTH_SQLITE_TRANSIENT) { $0 }
            guard rc == SQLITE_OK else { throw connection.error(rc, "bind") }
        }
    }

    /// Binds `value` to `parameter` and passes the result code to `then`, which runs while
    /// the bytes of a text or blob are still lent (so `SQLITE_STATIC` may bind them in place).
    private func bind<R>(_ value: SQLiteValue, at parameter: Int32, _ destructor: sqlite3_destructor_type?,
                         then: (Int32) -> R) -> R {
        switch value {
        case .null: return then(sqlite3_bind_null(handle, parameter))
        case .integer(let v): return then(sqlite3_bind_int64(handle, parameter, v))
        case .real(let v): return then(sqlite3_bind_double(handle, parameter, v))
        case .text(let s):
            var s = s
            return s.withUTF8 { utf8 in
                utf8.withMemoryRebound(to: CChar.self) { chars in
                    // An empty text still needs a non-null pointer (a null one binds NULL).
                    guard let base = chars.baseAddress, !chars.isEmpty else {
                        return then(sqlite3_bind_text(handle, parameter, "", 0, HEARTH_SQLITE_TRANSIENT))
                    }
                    return then(sqlite3_bind_text(handle, parameter, base, Int32(chars.count), destructor))
                }
            }
        case .blob(let b) where b.isEmpty:
            return then(sqlite3_bind_zeroblob(handle, parameter, 0))  // a nil pointer would bind NULL
        case .blob(let b):
            return b.withUnsafeBytes { then(sqlite3_bind_blob(handle, parameter, $0.baseAddress, Int32($0.count), destructor)) }
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
    /// statement runs inside the innermost one, and the bindings are cleared before `run`
    /// returns, while `values` still holds the bytes (a create binds ~12 texts on the
    /// single writer, each a `malloc`, a copy and a `free` in SQLite).
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
        return bind(values[index], at: Int32(index + 1), HEARTH_SQLITE_STATIC) { rc in
            guard rc == SQLITE_OK else { return .failure(connection.error(rc, "bind")) }
            return bindInPlace(values, from: index + 1)
        }
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
