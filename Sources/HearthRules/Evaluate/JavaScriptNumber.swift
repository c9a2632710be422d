/// JavaScript's Number-to-String conversion (ECMA-262 Number::toString), used when `+`
/// concatenates a number with a string: `1.1 + ''` is `"1.1"`, `0 + ''` is `"0"`, NaN is
/// `"NaN"` (docs/protocol/rules.md §3.5). Swift's `description` already gives the shortest
/// round-tripping digits; this only lays them out the way JavaScript does.
enum JavaScriptNumber {
    static func string(_ value: Double) -> String {
        if value.isNaN { return "NaN" }
        if value == 0 { return "0" }
        if value.isInfinite { return value < 0 ? "-Infinity" : "Infinity" }
        if value < 0 { return "-" + string(-value) }

        // Digits and decimal exponent from Swift's shortest representation.
        let text = value.description
        var mantissa = Substring(text)
        var exponent = 0
        if let e = text.firstIndex(where: { $0 == "e" || $0 == "E" }) {
            mantissa = text[..<e]
            exponent = Int(text[text.index(after: e)...]) ?? 0
        }
        var digits = ""
        var pointPosition = mantissa.count
        for (offset, character) in mantissa.enumerated() {
            if character == "." {
                pointPosition = offset
            } else {
                digits.append(character)
            }
        }
        // value = 0.digits × 10^n
        var n = pointPosition + exponent
        while digits.hasPrefix("0") && digits.count > 1 {
            digits.removeFirst()
            n -= 1
        }
        while digits.hasSuffix("0") && digits.count > 1 { digits.removeLast() }
        let k = digits.count

        if k <= n && n <= 21 {
            return digits + String(repeating: "0", count: n - k)
        }
        if 0 < n && n <= 21 {
            let split = digits.index(digits.startIndex, offsetBy: n)
            return String(digits[..<split]) + "." + String(digits[split...])
        }
        if -6 < n && n <= 0 {
            return "0." + String(repeating: "0", count: -n) + digits
        }
        let e = n - 1
        let exponentText = e < 0 ? "e-\(-e)" : "e+\(e)"
        if k == 1 { return digits + exponentText }
        return String(digits.prefix(1)) + "." + String(digits.dropFirst()) + exponentText
    }
}
