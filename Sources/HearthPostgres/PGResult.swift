import CLibPQ

/// The rows (text format) of one statement; owns its `PGresult`, which is independent of
/// the connection once returned. Readers take a row and a column index; an index out of
/// range reads as an empty text (libpq checks the bounds). Like `PGConnection`, not
/// `Sendable`: it stays with the connection's owner.
final class PGResult {
    private let raw: OpaquePointer

    /// Takes ownership of `raw` (cleared in `deinit`).
    init(_ raw: OpaquePointer) { self.raw = raw }

    deinit { PQclear(raw) }

    var rowCount: Int { Int(PQntuples(raw)) }
    var columnCount: Int { Int(PQnfields(raw)) }

    /// Rows an INSERT, UPDATE, DELETE, MERGE, SELECT or COPY affected; 0 for other commands.
    var affectedRows: Int {
        guard let tuples = PQcmdTuples(raw) else { return 0 }
        return Int(String(cString: tuples)) ?? 0
    }

    /// The command tag ("INSERT 0 1", "COMMIT", "ROLLBACK" …).
    var commandStatus: String {
        guard let status = PQcmdStatus(raw) else { return "" }
        return String(cString: status)
    }

    func isNull(_ row: Int, _ column: Int) -> Bool {
        PQgetisnull(raw, Int32(clamping: row), Int32(clamping: column)) != 0
    }

    /// The value's text; "" for NULL (check `isNull` where the two differ).
    func text(_ row: Int, _ column: Int) -> String {
        withBytes(row, column) { String(decoding: $0, as: UTF8.self) }
    }

    /// An integer column (`bigint`, `integer`, `smallint`, an integral `numeric`); 0 for NULL.
    func int64(_ row: Int, _ column: Int) -> Int64 {
        withBytes(row, column) { bytes in
            var value: Int64 = 0
            var negative = false
            for (index, byte) in bytes.enumerated() {
                if index == 0 && byte == UInt8(ascii: "-") { negative = true; continue }
                guard byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") else { return 0 }
                let digit = Int64(byte - UInt8(ascii: "0"))
                // Accumulate towards the negative side, which also holds Int64.min.
                let (times10, overflow1) = value.multipliedReportingOverflow(by: 10)
                let (next, overflow2) = times10.subtractingReportingOverflow(digit)
                guard !overflow1 && !overflow2 else { return 0 }
                value = next
            }
            if negative { return value }
            return value == .min ? 0 : -value
        }
    }

    /// A `double precision` (or any numeric) column; PostgreSQL's output round-trips
    /// (extra_float_digits defaults to 1). 0 for NULL.
    func double(_ row: Int, _ column: Int) -> Double {
        Double(text(row, column)) ?? 0
    }

    /// A `boolean` column: PostgreSQL writes `t` or `f`. false for NULL.
    func bool(_ row: Int, _ column: Int) -> Bool {
        withBytes(row, column) { $0.first == UInt8(ascii: "t") }
    }

    /// A `bytea` column, decoded from the hex output (`\x…`, the session's `bytea_output`);
    /// for another column type, the value's UTF-8 bytes. Empty for NULL.
    func bytes(_ row: Int, _ column: Int) -> [UInt8] {
        withBytes(row, column) { text in
            guard text.count >= 2, text[0] == UInt8(ascii: "\\"), text[1] == UInt8(ascii: "x") else { return Array(text) }
            var bytes: [UInt8] = []
            bytes.reserveCapacity((text.count - 2) / 2)
            var index = 2
            while index + 1 < text.count {
                guard let high = Self.hexDigit(text[index]), let low = Self.hexDigit(text[index + 1]) else { break }
                bytes.append(high << 4 | low)
                index += 2
            }
            return bytes
        }
    }

    private static func hexDigit(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return byte - UInt8(ascii: "A") + 10
        default: return nil
        }
    }

    /// The value's bytes, without copying them out of the result.
    private func withBytes<R>(_ row: Int, _ column: Int, _ body: (UnsafeBufferPointer<UInt8>) -> R) -> R {
        let r = Int32(clamping: row), c = Int32(clamping: column)
        guard let value = PQgetvalue(raw, r, c) else { return body(UnsafeBufferPointer(start: nil, count: 0)) }
        let length = Int(PQgetlength(raw, r, c))
        return UnsafeRawPointer(value).withMemoryRebound(to: UInt8.self, capacity: length) {
            body(UnsafeBufferPointer(start: $0, count: length))
        }
    }
}
