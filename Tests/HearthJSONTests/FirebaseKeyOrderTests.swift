import HearthTesting
import Testing
@testable import HearthJSON

@Suite("FirebaseKeyOrder")
struct FirebaseKeyOrderTests {
    /// Pairs (a, b) with a strictly before b.
    @Test(arguments: [
        ("1", "2"),
        ("2", "10"),  // numeric, not string order
        ("9", "10"),
        ("-1", "0"),
        ("-10", "-9"),
        ("-2147483648", "2147483647"),
        ("1", "01"),  // same value: shorter first
        ("01", "001"),
        ("0", "-0"),
        ("0", "00"),
        ("-0", "00"),  // same value and length: UTF-16 tie-break ("-" < "0")
        ("2147483647", "2147483648"),  // Int32.max is an integer key; one more is a string
        ("2147483647", "-2147483649"),
        ("999", "a"),  // integers before all strings
        ("-5", "+5"),
        ("10", "10000000000"),  // 11 digits: a string key
        ("00000000000001", "2"),  // leading zeros are free: value 1
        ("9", "2147483648"),  // an integer key before an out-of-range numeric string
        ("0000000000000000000000", "a"),
        ("10", "1.5"),  // "1.5" is not an integer key
        ("A", "B"),
        ("B", "a"),  // upper case before lower case
        ("a", "aa"),
        ("a", "b"),
        ("_", "a"),
        ("Z", "_"),
        ("é", "😀"),
        ("😀", "\u{FFFF}"),  // UTF-16: surrogate D83D < FFFF (scalar order says otherwise)
        ("😀", "\u{E000}"),
        ("\u{D7FF}", "😀"),
        ("a😀", "a\u{FF5E}"),
        ("𐀀", "😀"),  // both supplementary: code point order
        ("1a", "a"),
        ("-", "-a"),
        (" 1", "1a"),
    ])
    func ordersPairs(_ a: String, _ b: String) {
        #expect(FirebaseKeyOrder.less(a, b), "\(a) < \(b)")
        #expect(!FirebaseKeyOrder.less(b, a), "!(\(b) < \(a))")
        #expect(FirebaseKeyOrder.compare(a, b) == -1)
        #expect(FirebaseKeyOrder.compare(b, a) == 1)
    }

    @Test(arguments: ["", "a", "1", "-0", "😀"])
    func irreflexive(_ a: String) {
        #expect(!FirebaseKeyOrder.less(a, a))
        #expect(FirebaseKeyOrder.compare(a, a) == 0)
    }

    @Test(arguments: [
        ("0", Int32?(0)), ("-0", 0), ("007", 7), ("-2147483648", .min), ("2147483647", .max),
        ("2147483648", nil), ("-2147483649", nil), ("12345678901", nil), ("00000000001234567890", 1_234_567_890),
        ("", nil), ("-", nil), ("+1", nil), ("1e3", nil), (" 1", nil), ("1 ", nil), ("١", nil), ("0x1", nil),
    ])
    func integerKeys(_ key: String, _ expected: Int32?) {
        #expect(FirebaseKeyOrder.int32Value(key) == expected)
    }

    @Test func sortsAMixedList() {
        let keys = ["b", "10", "a", "-3", "01", "1", "2147483648", "Z", "-2147483648", "😀", "\u{FFFF}"]
        let expected = ["-2147483648", "-3", "1", "01", "10", "2147483648", "Z", "a", "b", "😀", "\u{FFFF}"]
        #expect(FirebaseKeyOrder.sorted(keys) == expected)
        #expect(keys.sorted(by: FirebaseKeyOrder.less) == expected)
    }

    @Test func stringOrderIsUTF16Order() {
        // Random strings over an alphabet that mixes ASCII, BMP above the surrogates and
        // supplementary scalars: compare with Swift's UTF-16 view.
        let alphabet: [Character] = ["a", "b", "é", "\u{E000}", "\u{FFFD}", "😀", "𐀀", "0", "-"]
        var rng = SplitMix64(seed: 7)
        for _ in 0..<5_000 {
            let a = String((0..<Int.random(in: 0...4, using: &rng)).map { _ in alphabet.randomElement(using: &rng)! })
            let b = String((0..<Int.random(in: 0...4, using: &rng)).map { _ in alphabet.randomElement(using: &rng)! })
            let expected = a == b ? 0 : (Array(a.utf16).lexicographicallyPrecedes(Array(b.utf16)) ? -1 : 1)
            #expect(FirebaseKeyOrder.compareUTF16(a, b) == expected, "\(a) vs \(b)")
        }
    }

    @Test func isATotalOrderOnASample() {
        let keys = ["", "0", "-0", "00", "1", "01", "-1", "10", "2147483647", "2147483648", "a", "A", "😀", "\u{FFFF}", "-", "1a"]
        for a in keys {
            for b in keys {
                for c in keys where FirebaseKeyOrder.less(a, b) && FirebaseKeyOrder.less(b, c) {
                    #expect(FirebaseKeyOrder.less(a, c), "\(a) < \(b) < \(c)")
                }
                if a != b { #expect(FirebaseKeyOrder.less(a, b) != FirebaseKeyOrder.less(b, a)) }
            }
        }
    }
}
