import Testing
@testable import HearthAuth

@Suite("Base64")
struct Base64Tests {
    /// RFC 4648 §10 test vectors.
    @Test(arguments: [
        ("", ""), ("f", "Zg=="), ("fo", "Zm8="), ("foo", "Zm9v"), ("foob", "Zm9vYg=="),
        ("fooba", "Zm9vYmE="), ("foobar", "Zm9vYmFy"),
    ])
    func rfc4648Vectors(plain: String, encoded: String) {
        #expect(Base64.encode(Array(plain.utf8)) == encoded)
        #expect(Base64.decode(encoded) == Array(plain.utf8))
        let unpadded = String(encoded.prefix { $0 != "=" })
        #expect(Base64.encode(Array(plain.utf8), alphabet: .url, padding: .none) == unpadded)
        #expect(Base64.decode(unpadded, alphabet: .url, padding: .none) == Array(plain.utf8))
        #expect(Base64.decode(unpadded, padding: .optional) == Array(plain.utf8))
        #expect(Base64.decode(encoded, padding: .optional) == Array(plain.utf8))
    }

    @Test func alphabetsDiffer() {
        let bytes: [UInt8] = [0xfb, 0xff, 0xbf]
        #expect(Base64.encode(bytes) == "+/+/")
        #expect(Base64.encode(bytes, alphabet: .url) == "-_-_")
        #expect(Base64.decode("-_-_") == nil)
        #expect(Base64.decode("+/+/", alphabet: .url) == nil)
    }

    @Test(arguments: [
        ("Zg", Base64.Padding.required),     // padding missing
        ("Zg==", .none),                      // padding forbidden
        ("Zg=", .required),                   // wrong amount
        ("Zg=", .optional),
        ("Zm8==", .optional),
        ("Z", .none),                         // a lone final character
        ("Zh", .none),                        // non-zero trailing bits (non-canonical "f")
        ("Zm9=", .optional),
        ("Zm 9v", .none),                     // whitespace
        ("Zm9v\n", .none),
        ("Zm9v!", .none),
        ("==", .optional),
        ("Z===", .optional),
    ])
    func rejectsNonCanonical(text: String, padding: Base64.Padding) {
        #expect(Base64.decode(text, padding: padding) == nil)
    }

    @Test func roundTripsEveryLength() throws {
        for length in 0..<70 {
            let bytes = try SecureRandom.bytes(count: length)
            for alphabet in [Base64.Alphabet.standard, .url] {
                for padding in [Base64.Padding.none, .required] {
                    let text = Base64.encode(bytes, alphabet: alphabet, padding: padding)
                    #expect(Base64.decode(text, alphabet: alphabet, padding: padding) == bytes)
                }
            }
        }
    }
}
