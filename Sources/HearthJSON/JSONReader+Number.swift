/// JSON numbers (RFC 8259 §6): exact `Int64` when possible, else a correctly rounded
/// `Double`; overflow to ±Infinity is an error (docs/protocol/rest.md §1.7).
extension JSONReader {
    /// Reads `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?` (RFC 8259 §6).
    mutating func parseNumber() throws(JSONParseError) -> JSONValue {
        let start = pos
        let negative = bytes[pos] == UInt8(ascii: "-")
        if negative { pos += 1 }

        // Integer part, accumulated exactly while it fits.
        var mantissa: UInt64 = 0
        var mantissaOverflow = false
        guard pos < bytes.count, isDigit(bytes[pos]) else { throw .invalidNumber(offset: pos) }
        if bytes[pos] == UInt8(ascii: "0") {
            pos += 1
            if pos < bytes.count, isDigit(bytes[pos]) { throw .invalidNumber(offset: pos) }
        } else {
            while pos < bytes.count, isDigit(bytes[pos]) {
                accumulate(bytes[pos], into: &mantissa, overflow: &mantissaOverflow)
                pos += 1
            }
        }

        var isInteger = true
        var fractionDigits = 0
        if pos < bytes.count, bytes[pos] == UInt8(ascii: ".") {
            isInteger = false
            pos += 1
            guard pos < bytes.count, isDigit(bytes[pos]) else { throw .invalidNumber(offset: pos) }
            while pos < bytes.count, isDigit(bytes[pos]) {
                if !mantissaOverflow {
                    accumulate(bytes[pos], into: &mantissa, overflow: &mantissaOverflow)
                    fractionDigits += 1
                }
                pos += 1
            }
        }

        var exponent = 0
        if pos < bytes.count, bytes[pos] == UInt8(ascii: "e") || bytes[pos] == UInt8(ascii: "E") {
            isInteger = false
            pos += 1
            var exponentNegative = false
            if pos < bytes.count, bytes[pos] == UInt8(ascii: "+") || bytes[pos] == UInt8(ascii: "-") {
                exponentNegative = bytes[pos] == UInt8(ascii: "-")
                pos += 1
            }
            guard pos < bytes.count, isDigit(bytes[pos]) else { throw .invalidNumber(offset: pos) }
            while pos < bytes.count, isDigit(bytes[pos]) {
                if exponent < 1_000_000 { exponent = exponent * 10 + Int(bytes[pos] &- UInt8(ascii: "0")) }
                pos += 1
            }
            if exponentNegative { exponent = -exponent }
        }

        if isInteger && !mantissaOverflow {
            if !negative, mantissa <= UInt64(Int64.max) { return .int(Int64(mantissa)) }
            if negative, mantissa <= UInt64(Int64.max) + 1 { return .int(Int64(truncatingIfNeeded: 0 &- mantissa)) }
        }

        // Clinger's fast path: an exactly representable mantissa scaled by an exactly
        // representable power of ten is correctly rounded by one IEEE operation.
        let scale = exponent - fractionDigits
        if !mantissaOverflow, mantissa <= 1 << 53, (-22...22).contains(scale) {
            var d = Double(mantissa)
            d = scale < 0 ? d / Self.powersOfTen[-scale] : d * Self.powersOfTen[scale]
            return .double(negative ? -d : d)
        }

        // Slow path: the C library's correctly rounded conversion, via the standard library.
        let text = String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<pos]), as: UTF8.self)
        guard let d = Double(text), d.isFinite else { throw .numberOutOfRange(offset: start) }
        return .double(d)
    }

    private func isDigit(_ byte: UInt8) -> Bool {
        byte &- UInt8(ascii: "0") < 10
    }

    /// Adds one decimal digit to an exact mantissa, or marks it inexact once the digit
    /// would not fit in 64 bits (the caller then takes the slow path).
    private func accumulate(_ digit: UInt8, into mantissa: inout UInt64, overflow: inout Bool) {
        let d = UInt64(digit &- UInt8(ascii: "0"))
        let (times10, o1) = mantissa.multipliedReportingOverflow(by: 10)
        let (sum, o2) = times10.addingReportingOverflow(d)
        if o1 || o2 { overflow = true } else { mantissa = sum }
    }

    private static let powersOfTen: [Double] = [
        1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11,
        1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
    ]
}
