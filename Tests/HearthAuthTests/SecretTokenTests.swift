import Testing
@testable import HearthAuth

@Suite("SecretToken and ConstantTime")
struct SecretTokenTests {
    @Test func format() throws {
        let token = try SecretToken.generate()
        #expect(token.count == SecretToken.encodedLength)
        #expect(token.utf8.allSatisfy { c in
            (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(c) || (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(c)
                || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(c) || c == UInt8(ascii: "-") || c == UInt8(ascii: "_")
        })
        #expect(Base64.decode(token, alphabet: .url, padding: .none)?.count == 32)
        #expect(SecretToken.isWellFormed(token))
    }

    /// 256 bits each: no repeats, and bits are balanced (mean of 1000×256 bits within
    /// ±1% of ½; the standard deviation is ~0.1%).
    @Test func entropy() throws {
        var seen = Set<String>()
        var ones = 0
        for _ in 0..<1000 {
            let token = try SecretToken.generate()
            seen.insert(token)
            ones += Base64.decode(token, alphabet: .url, padding: .none)!.reduce(0) { $0 + $1.nonzeroBitCount }
        }
        #expect(seen.count == 1000)
        let fraction = Double(ones) / Double(1000 * 256)
        #expect(abs(fraction - 0.5) < 0.01)
    }

    @Test(arguments: ["", "short", String(repeating: "A", count: 42), String(repeating: "A", count: 44),
                      String(repeating: "A", count: 42) + "+", String(repeating: "A", count: 42) + "B"])
    func malformedTokens(token: String) {
        #expect(!SecretToken.isWellFormed(token))
    }

    @Test func hashIsSHA256Hex() throws {
        #expect(SecretToken.hash("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        let token = try SecretToken.generate()
        let hash = SecretToken.hash(token)
        #expect(hash.count == SecretToken.hashLength)
        #expect(hash == SecretToken.hash(token))
        #expect(hash != SecretToken.hash(try SecretToken.generate()))
        #expect(!hash.contains(token))
    }

    @Test func constantTimeEquals() {
        let a: [UInt8] = [1, 2, 3, 4]
        #expect(ConstantTime.equals(a, [1, 2, 3, 4]))
        #expect(!ConstantTime.equals(a, [0, 2, 3, 4]))
        #expect(!ConstantTime.equals(a, [1, 2, 3, 5]))
        #expect(!ConstantTime.equals(a, [1, 2, 3]))
        #expect(!ConstantTime.equals(a, [1, 2, 3, 4, 5]))
        #expect(ConstantTime.equals([], []))
        #expect(!ConstantTime.equals([], [0]))
        #expect(ConstantTime.equals("tökén", "tökén"))
        #expect(!ConstantTime.equals("token", "tokem"))
        #expect(!ConstantTime.equals("é", "e\u{301}"))   // bytes, not canonical equivalence
        #expect(ConstantTime.equals("abc"[...], "abc"))
    }
}
