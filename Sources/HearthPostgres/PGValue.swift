import HearthStore

/// A value bound to a statement parameter, sent in PostgreSQL's text format; the server
/// converts it to the parameter's type (a `.text` bound to a `bigint` column is parsed).
enum PGValue: Sendable, Equatable {
    case text(String)
    case int(Int64)
    /// Must be finite: JSON has no infinities or NaN, so one here is a bug and is refused.
    case double(Double)
    case bool(Bool)
    /// Sent as bytea hex (`\x…`).
    case bytes([UInt8])
    case null
}

/// Parameters encoded into one NUL-separated buffer (one allocation per statement).
struct PGParameters {
    private var buffer: [CChar] = []
    private var offsets: [Int?] = []

    init(_ values: [PGValue]) throws(StoreError) {
        offsets.reserveCapacity(values.count)
        for (index, value) in values.enumerated() {
            switch value {
            case .null:
                offsets.append(nil)
                continue
            case .text(let text):
                offsets.append(buffer.count)
                for byte in text.utf8 {
                    // PostgreSQL text cannot hold NUL: it would silently end the value here.
                    guard byte != 0 else {
                        throw PGFailure.make(code: "22021", kind: .other, message: "parameter $\(index + 1) holds a NUL character, which PostgreSQL text cannot store", operation: "bind")
                    }
                    buffer.append(CChar(bitPattern: byte))
                }
            case .int(let int):
                offsets.append(buffer.count)
                append(String(int))
            case .double(let double):
                guard double.isFinite else {
                    throw PGFailure.make(code: "22000", kind: .other, message: "parameter $\(index + 1) is not a finite number", operation: "bind")
                }
                offsets.append(buffer.count)
                append("\(double)")  // Swift's description is the shortest text that round-trips
            case .bool(let bool):
                offsets.append(buffer.count)
                append(bool ? "t" : "f")
            case .bytes(let bytes):
                offsets.append(buffer.count)
                let digits = Array("0123456789abcdef".utf8)
                buffer.reserveCapacity(buffer.count + 2 * bytes.count + 3)
                append("\\x")
                for byte in bytes {
                    buffer.append(CChar(bitPattern: digits[Int(byte >> 4)]))
                    buffer.append(CChar(bitPattern: digits[Int(byte & 0x0F)]))
                }
            }
            buffer.append(0)
        }
    }

    private mutating func append(_ text: String) {
        for byte in text.utf8 { buffer.append(CChar(bitPattern: byte)) }
    }

    /// Calls `body` with libpq's `paramValues`: a C string per parameter, NULL for SQL NULL.
    func withPointers<R>(_ body: (UnsafePointer<UnsafePointer<CChar>?>?) -> R) -> R {
        buffer.withUnsafeBufferPointer { bytes in
            let pointers: [UnsafePointer<CChar>?] = offsets.map { offset in
                guard let offset, let base = bytes.baseAddress else { return nil }
                return base + offset
            }
            return pointers.withUnsafeBufferPointer { body($0.baseAddress) }
        }
    }
}
