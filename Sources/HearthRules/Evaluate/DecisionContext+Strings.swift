/// String methods (docs/protocol/rules.md §3.5). Comparisons are by exact UTF-8 bytes,
/// never by Unicode canonical equivalence, so look-alike strings never match each other.
extension DecisionContext {
    mutating func callString(_ object: IR, _ method: StringMethod, _ arguments: [IR], _ frame: Frame) throws(EvaluationFailure) -> RuntimeValue {
        let receiver = try evaluate(object, frame)
        var values: [String] = []
        for argument in arguments {
            let value = try evaluate(argument, frame)
            guard case .string(let text) = value else {
                throw .runtime("\(method.rawValue)() needs string arguments, not \(value.typeName)")
            }
            values.append(text)
        }
        guard case .string(let text) = receiver else {
            throw .runtime("\(method.rawValue)() called on \(receiver.typeName)")
        }
        try charge((text.utf8.count + values.reduce(0) { $0 + $1.utf8.count }) / 16)
        switch method {
        case .contains:
            return .bool(ByteSearch.firstIndex(of: Array(values[0].utf8), in: Array(text.utf8)) != nil)
        case .beginsWith:
            return .bool(text.utf8.starts(with: values[0].utf8))
        case .endsWith:
            return .bool(text.utf8.reversed().starts(with: values[0].utf8.reversed()))
        case .replace:
            let result = ByteSearch.replacingAll(Array(values[0].utf8), with: Array(values[1].utf8), in: Array(text.utf8))
            try charge(result.count / 16)
            return .string(String(decoding: result, as: UTF8.self))
        case .toLowerCase:
            return .string(text.lowercased())
        case .toUpperCase:
            return .string(text.uppercased())
        case .matches:
            throw .runtime("matches() needs a regular expression literal")
        }
    }
}

/// Linear-time substring search over bytes (Knuth–Morris–Pratt), for `contains` and
/// `replace`: a long string cannot make a rule quadratic.
enum ByteSearch {
    static func firstIndex(of needle: [UInt8], in haystack: [UInt8]) -> Int? {
        if needle.isEmpty { return 0 }
        return firstIndex(of: needle, failure: failureTable(needle), in: haystack, from: 0)
    }

    private static func firstIndex(of needle: [UInt8], failure: [Int], in haystack: [UInt8], from start: Int) -> Int? {
        var matched = 0
        var index = start
        while index < haystack.count {
            while matched > 0 && haystack[index] != needle[matched] { matched = failure[matched - 1] }
            if haystack[index] == needle[matched] { matched += 1 }
            if matched == needle.count { return index - needle.count + 1 }
            index += 1
        }
        return nil
    }

    /// Every non-overlapping occurrence, left to right, replaced literally
    /// (docs/protocol/rules.md §3.5: `replace` replaces all occurrences and is not a
    /// regex). An empty search string leaves the text unchanged.
    static func replacingAll(_ needle: [UInt8], with replacement: [UInt8], in haystack: [UInt8]) -> [UInt8] {
        guard !needle.isEmpty else { return haystack }
        var result: [UInt8] = []
        let failure = failureTable(needle)
        var position = 0
        while let found = firstIndex(of: needle, failure: failure, in: haystack, from: position) {
            result.append(contentsOf: haystack[position..<found])
            result.append(contentsOf: replacement)
            position = found + needle.count
        }
        result.append(contentsOf: haystack[position...])
        return result
    }

    private static func failureTable(_ needle: [UInt8]) -> [Int] {
        var table = Array(repeating: 0, count: needle.count)
        var length = 0
        var index = 1
        while index < needle.count {
            if needle[index] == needle[length] {
                length += 1
                table[index] = length
                index += 1
            } else if length > 0 {
                length = table[length - 1]
            } else {
                index += 1
            }
        }
        return table
    }
}
