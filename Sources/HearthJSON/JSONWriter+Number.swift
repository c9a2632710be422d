/// Number formatting for `JSONWriter`.
///
/// Goals, in order: valid JSON; exact round trip (parsing the output gives the same
/// number); type stability (what was an integer stays one); and JavaScript's look, since
/// Firebase clients are mostly JavaScript and Firebase data are JavaScript numbers.
///
/// * `.int` is written in decimal.
/// * An integral `.double` with |v| ≤ 2^53 is written as an integer, as JavaScript does:
///   `5.0` → `5`, `-0.0` → `0`. (It re-parses as `.int`; `FirebaseTree.normalize` makes the
///   same identification, docs/protocol/rest.md §1.8.)
/// * Any other `.double` is written with its shortest round-trip digits (the standard
///   library's `description`, which is shortest-round-trip since Swift 5), laid out like
///   ECMAScript `Number::toString`: plain decimals for exponents in (-7, 21), otherwise
///   `d.ddde±n`: `0.1`, `123.456`, `0.000001`, `1e-7`, `1e+21`, `1.5e+300`.
///   One deviation: JavaScript writes integral values between 2^53 and 10^21 as long digit
///   strings (`10000000000000000`); those would re-parse as `.int`, so Hearth writes
///   them in exponent form (`1e+16`, `1.152921504606847e+18`) to keep them doubles.
/// * NaN and ±Infinity cannot be written: the parser and `FirebaseTree.normalize` reject
///   them. A value built in code that still holds one is written as `null` (what
///   `JSON.stringify` does) rather than producing invalid JSON.
extension JSONWriter {
    /// 2^53: integral doubles up to this magnitude are exact integers and written as such.
    static let maxIntegralDoubleWrittenAsInteger: Double = 9_007_199_254_740_992

    static func writeInt(_ n: Int64, into out: inout [UInt8]) {
        var magnitude = n.magnitude
        if n < 0 { out.append(UInt8(ascii: "-")) }
        if magnitude < 10 {
            out.append(UInt8(ascii: "0") + UInt8(magnitude))
            return
        }
        var digits: (UInt64, UInt64, UInt64) = (0, 0, 0)  // 24 bytes of stack >= 20 digits
        withUnsafeMutableBytes(of: &digits) { buffer in
            var i = buffer.count
            while magnitude > 0 {
                i -= 1
                buffer[i] = UInt8(ascii: "0") + UInt8(magnitude % 10)
                magnitude /= 10
            }
            out.append(contentsOf: UnsafeRawBufferPointer(rebasing: buffer[i...]))
        }
    }

    static func writeDouble(_ d: Double, into out: inout [UInt8]) {
        guard d.isFinite else {
            out.append(contentsOf: "null".utf8)
            return
        }
        if d.magnitude <= maxIntegralDoubleWrittenAsInteger, d.rounded(.towardZero) == d {
            writeInt(Int64(d), into: &out)
            return
        }
        var text = d.description
        text.withUTF8 { writeJavaScriptNotation(shortest: $0, into: &out) }
    }

    /// Re-lays the standard library's shortest representation (`-1.5e-07`, `123.45`,
    /// `1e+16`) in ECMAScript `Number::toString` form.
    private static func writeJavaScriptNotation(shortest text: UnsafeBufferPointer<UInt8>, into out: inout [UInt8]) {
        // Decompose into sign, significant digits D (no leading/trailing zeros) and the
        // decimal exponent n such that value = 0.D × 10^n (ECMA-262 Number::toString's n).
        var i = 0
        if text[i] == UInt8(ascii: "-") {
            out.append(UInt8(ascii: "-"))
            i += 1
        }
        var digits: [UInt8] = []
        digits.reserveCapacity(20)
        var digitsBeforePoint = 0
        var seenPoint = false
        while i < text.count, text[i] != UInt8(ascii: "e") {
            let c = text[i]
            if c == UInt8(ascii: ".") {
                seenPoint = true
            } else {
                digits.append(c)
                if !seenPoint { digitsBeforePoint += 1 }
            }
            i += 1
        }
        var exponent = 0
        if i < text.count {  // at "e"
            i += 1
            var negative = false
            if text[i] == UInt8(ascii: "-") || text[i] == UInt8(ascii: "+") {
                negative = text[i] == UInt8(ascii: "-")
                i += 1
            }
            while i < text.count {
                exponent = exponent * 10 + Int(text[i] - UInt8(ascii: "0"))
                i += 1
            }
            if negative { exponent = -exponent }
        }
        var n = digitsBeforePoint + exponent
        var leadingZeros = 0
        while leadingZeros < digits.count - 1, digits[leadingZeros] == UInt8(ascii: "0") { leadingZeros += 1 }
        n -= leadingZeros
        var end = digits.count
        while end > leadingZeros + 1, digits[end - 1] == UInt8(ascii: "0") { end -= 1 }
        let significant = digits[leadingZeros..<end]
        let k = significant.count

        if k <= n, n <= 21 {
            // Integral and beyond 2^53 (smaller ones were written as integers): exponent
            // form, see the type comment.
            writeExponentForm(significant, n: n, into: &out)
        } else if 0 < n, n <= 21 {
            out.append(contentsOf: significant.prefix(n))
            out.append(UInt8(ascii: "."))
            out.append(contentsOf: significant.dropFirst(n))
        } else if -6 < n, n <= 0 {
            out.append(UInt8(ascii: "0"))
            out.append(UInt8(ascii: "."))
            out.append(contentsOf: repeatElement(UInt8(ascii: "0"), count: -n))
            out.append(contentsOf: significant)
        } else {
            writeExponentForm(significant, n: n, into: &out)
        }
    }

    private static func writeExponentForm(_ significant: ArraySlice<UInt8>, n: Int, into out: inout [UInt8]) {
        out.append(significant[significant.startIndex])
        if significant.count > 1 {
            out.append(UInt8(ascii: "."))
            out.append(contentsOf: significant.dropFirst())
        }
        out.append(UInt8(ascii: "e"))
        let e = n - 1
        out.append(e < 0 ? UInt8(ascii: "-") : UInt8(ascii: "+"))
        writeInt(Int64(e.magnitude), into: &out)
    }
}
