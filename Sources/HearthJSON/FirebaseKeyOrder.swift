/// Firebase's order of child keys (`orderBy="$key"`, and the order in which Hearth writes
/// object members), docs/protocol/rest.md §1.3.
///
/// It mirrors js-sdk `nameCompare` (`packages/database/src/core/util/util.ts`):
///
/// 1. Keys that are 32-bit signed integers come first, in numeric order. A key is one when
///    it matches `^-?(0*)\d{1,10}$` (ASCII digits; leading zeros are free, at most ten
///    further digits) and its value lies in `Int32.min...Int32.max` (js-sdk `tryParseInt`).
///    Equal values sort the shorter string first: `"1" < "01" < "001"`, `"0" < "-0"`.
/// 2. All other keys follow, compared as JavaScript compares strings: by UTF-16 code units
///    (so `"\u{FFFF}"` sorts *after* `"😀"`, unlike a byte or scalar order).
///
/// One deliberate refinement: js `nameCompare` calls `"-0"` and `"00"` (same value, same
/// length) equal. `less` breaks such ties by UTF-16 order so that it is a strict total order
/// and sorting is deterministic.
public enum FirebaseKeyOrder {
    /// True when `a` sorts before `b` in Firebase key order.
    public static func less(_ a: String, _ b: String) -> Bool {
        compare(a, b) < 0
    }

    /// -1, 0 or 1 as `a` sorts before, equal to or after `b`. 0 only for equal strings.
    public static func compare(_ a: String, _ b: String) -> Int {
        compare(a, int32Value(a), b, int32Value(b))
    }

    /// Keys sorted in Firebase key order. Parses each key's integer form once.
    public static func sorted<Keys: Sequence<String>>(_ keys: Keys) -> [String] {
        var decorated = keys.map { ($0, int32Value($0)) }
        decorated.sort { compare($0.0, $0.1, $1.0, $1.1) < 0 }
        return decorated.map(\.0)
    }

    /// The key's value if it is a 32-bit integer key in the sense of js-sdk `tryParseInt`
    /// (`^-?(0*)\d{1,10}$` and within `Int32`), else nil.
    public static func int32Value(_ key: String) -> Int32? {
        int32Value(utf8: key.utf8)
    }

    /// `int32Value` of a key given as UTF-8 bytes.
    static func int32Value<Bytes: Sequence<UInt8>>(utf8 bytes: Bytes) -> Int32? {
        var utf8 = bytes.makeIterator()
        guard var byte = utf8.next() else { return nil }
        let negative = byte == UInt8(ascii: "-")
        if negative {
            guard let next = utf8.next() else { return nil }
            byte = next
        }
        var value: Int64 = 0
        var digitsAfterLeadingZeros = 0
        while true {
            let digit = byte &- UInt8(ascii: "0")
            guard digit < 10 else { return nil }
            if digitsAfterLeadingZeros > 0 || digit != 0 {
                digitsAfterLeadingZeros += 1
                guard digitsAfterLeadingZeros <= 10 else { return nil }
                value = value * 10 + Int64(digit)
            }
            guard let next = utf8.next() else { break }
            byte = next
        }
        if negative { value = -value }
        guard let result = Int32(exactly: value) else { return nil }
        return result
    }

    /// js `nameCompare` with pre-parsed integer forms (`int32Value`), plus the tie-break
    /// described above: for callers that compare one key many times.
    public static func compare(_ a: String, _ aInt: Int32?, _ b: String, _ bInt: Int32?) -> Int {
        switch (aInt, bInt) {
        case let (x?, y?):
            if x != y { return x < y ? -1 : 1 }
            let (la, lb) = (a.utf8.count, b.utf8.count)  // ASCII only: bytes == UTF-16 units
            if la != lb { return la < lb ? -1 : 1 }
            return compareUTF16(a, b)
        case (.some, .none): return -1
        case (.none, .some): return 1
        case (.none, .none): return compareUTF16(a, b)
        }
    }

    /// `compare` of keys given as UTF-8 bytes, with pre-parsed integer forms.
    static func compare(_ a: UnsafeBufferPointer<UInt8>, _ aInt: Int32?, _ b: UnsafeBufferPointer<UInt8>, _ bInt: Int32?) -> Int {
        switch (aInt, bInt) {
        case let (x?, y?):
            if x != y { return x < y ? -1 : 1 }
            if a.count != b.count { return a.count < b.count ? -1 : 1 }
            return compareUTF16(a, b)
        case (.some, .none): return -1
        case (.none, .some): return 1
        case (.none, .none): return compareUTF16(a, b)
        }
    }

    /// Compares two strings by UTF-16 code units, as JavaScript's `<` does.
    ///
    /// UTF-8 byte order equals code point order, which equals UTF-16 order except when a
    /// supplementary-plane scalar (a surrogate pair in UTF-16, D800–DBFF first) meets a
    /// BMP scalar at or above U+E000. So: find the first differing byte, decode the two
    /// scalars that contain it, and compare those by their first UTF-16 code unit.
    public static func compareUTF16(_ a: String, _ b: String) -> Int {
        // Native Swift strings are contiguous UTF-8, so this needs no copy; the fallback
        // covers strings bridged from elsewhere.
        let fast = a.utf8.withContiguousStorageIfAvailable { ua in
            b.utf8.withContiguousStorageIfAvailable { ub in compareUTF16(ua, ub) }
        }
        if let fast, let result = fast { return result }
        return Array(a.utf8).withUnsafeBufferPointer { ua in
            Array(b.utf8).withUnsafeBufferPointer { ub in compareUTF16(ua, ub) }
        }
    }

    static func compareUTF16(_ a: UnsafeBufferPointer<UInt8>, _ b: UnsafeBufferPointer<UInt8>) -> Int {
        let n = min(a.count, b.count)
        var i = 0
        while i < n && a[i] == b[i] { i += 1 }
        if i == n {
            return a.count == b.count ? 0 : (a.count < b.count ? -1 : 1)
        }
        // Both strings share the bytes before `i`, so the scalars containing byte `i`
        // start at the same offset: back up over continuation bytes.
        var start = i
        while start > 0 && a[start] & 0xC0 == 0x80 { start -= 1 }
        let sa = firstUTF16Unit(a, at: start)
        let sb = firstUTF16Unit(b, at: start)
        if sa != sb { return sa < sb ? -1 : 1 }
        // Same lead surrogate: both are supplementary, where byte order is right.
        return a[i] < b[i] ? -1 : 1
    }

    /// The first UTF-16 code unit of the (valid) UTF-8 scalar starting at `i`.
    private static func firstUTF16Unit(_ s: UnsafeBufferPointer<UInt8>, at i: Int) -> UInt32 {
        let lead = UInt32(s[i])
        let scalar: UInt32
        switch lead {
        case 0..<0x80: return lead
        case 0xC0..<0xE0:
            scalar = (lead & 0x1F) << 6 | UInt32(s[i + 1] & 0x3F)
        case 0xE0..<0xF0:
            scalar = (lead & 0x0F) << 12 | UInt32(s[i + 1] & 0x3F) << 6 | UInt32(s[i + 2] & 0x3F)
        default:
            scalar = (lead & 0x07) << 18 | UInt32(s[i + 1] & 0x3F) << 12
                | UInt32(s[i + 2] & 0x3F) << 6 | UInt32(s[i + 3] & 0x3F)
        }
        return scalar >= 0x10000 ? 0xD800 + ((scalar - 0x10000) >> 10) : scalar
    }
}
