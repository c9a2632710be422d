/// A set of Unicode scalars as sorted, non-overlapping ranges: character classes,
/// `\d \w \s` and their negations (docs/protocol/rules.md §3.5).
struct ScalarSet: Sendable, Equatable {
    private(set) var ranges: [ClosedRange<UInt32>]

    init(_ ranges: [ClosedRange<UInt32>] = []) {
        self.ranges = []
        for range in ranges { insert(range) }
    }

    static let maxScalar: UInt32 = 0x10FFFF

    static let digits = ScalarSet([0x30...0x39])
    static let word = ScalarSet([0x30...0x39, 0x41...0x5A, 0x5F...0x5F, 0x61...0x7A])
    /// JavaScript's `\s`: white space and line terminators.
    static let space = ScalarSet([
        0x09...0x0D, 0x20...0x20, 0xA0...0xA0, 0x1680...0x1680, 0x2000...0x200A,
        0x2028...0x2029, 0x202F...0x202F, 0x205F...0x205F, 0x3000...0x3000, 0xFEFF...0xFEFF,
    ])
    /// What `.` does not match (JavaScript line terminators).
    static let lineTerminators = ScalarSet([0x0A...0x0A, 0x0D...0x0D, 0x2028...0x2029])

    mutating func insert(_ range: ClosedRange<UInt32>) {
        var merged = range
        var result: [ClosedRange<UInt32>] = []
        var placed = false
        for existing in ranges {
            if existing.upperBound &+ 1 < merged.lowerBound {
                result.append(existing)
            } else if merged.upperBound &+ 1 < existing.lowerBound {
                if !placed {
                    result.append(merged)
                    placed = true
                }
                result.append(existing)
            } else {
                merged = min(existing.lowerBound, merged.lowerBound)...max(existing.upperBound, merged.upperBound)
            }
        }
        if !placed { result.append(merged) }
        ranges = result
    }

    mutating func formUnion(_ other: ScalarSet) {
        for range in other.ranges { insert(range) }
    }

    var inverted: ScalarSet {
        var result: [ClosedRange<UInt32>] = []
        var next: UInt32 = 0
        for range in ranges {
            if range.lowerBound > next { result.append(next...(range.lowerBound - 1)) }
            next = range.upperBound + 1
        }
        if next <= Self.maxScalar { result.append(next...Self.maxScalar) }
        return ScalarSet(result)
    }

    func contains(_ scalar: UInt32) -> Bool {
        var low = 0
        var high = ranges.count - 1
        while low <= high {
            let mid = (low + high) / 2
            let range = ranges[mid]
            if scalar < range.lowerBound {
                high = mid - 1
            } else if scalar > range.upperBound {
                low = mid + 1
            } else {
                return true
            }
        }
        return false
    }
}
