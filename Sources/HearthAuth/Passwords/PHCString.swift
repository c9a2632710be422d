/// A scrypt password hash in PHC string format, as Hearth stores it.
///
/// Exact format (the PHC string format, github.com/P-H-C/phc-string-format, with the
/// parameter names passlib uses for scrypt):
///
///     $scrypt$ln=<log2 N>,r=<r>,p=<p>$<salt>$<hash>
///
/// e.g. `$scrypt$ln=15,r=8,p=1$2hQXi2C6kBuVsRKp6vQq0g$…43 chars…`.
///
/// * `ln`, `r`, `p` appear exactly once, in that order, as canonical decimal integers (no
///   sign, no leading zeros), within `ScryptParameters`' limits.
/// * `<salt>` and `<hash>` are standard base64 (RFC 4648 §4, `+` and `/`) **without**
///   padding, as PHC specifies, and decode strictly (see `Base64`). Their decoded lengths
///   are the salt and hash lengths; both must be within `ScryptParameters`' ranges.
/// * No version field and no other fields; anything else is `malformed`.
///
/// Parsing is strict because the stored string decides how much memory and CPU a sign-in
/// spends: a corrupted or hostile string must fail before scrypt runs.
public struct PHCString: Sendable, Hashable, CustomStringConvertible {
    /// The algorithm identifier.
    public static let algorithm = "scrypt"
    /// The longest string `init(parsing:)` looks at; real ones are under 120 characters.
    public static let maxLength = 256

    public let parameters: ScryptParameters
    public let salt: [UInt8]
    public let hash: [UInt8]

    /// Combines parts that already agree: `salt.count` and `hash.count` must equal the
    /// lengths in `parameters`.
    public init(parameters: ScryptParameters, salt: [UInt8], hash: [UInt8]) {
        precondition(salt.count == parameters.saltLength && hash.count == parameters.hashLength,
                     "PHCString: salt/hash lengths disagree with the parameters")
        self.parameters = parameters
        self.salt = salt
        self.hash = hash
    }

    /// Parses a stored string (format above).
    public init(parsing text: String) throws(PasswordHashError) {
        guard text.utf8.count <= Self.maxLength else { throw .malformed(.tooLong) }
        let fields = text.split(separator: "$", omittingEmptySubsequences: false)
        // "", "scrypt", params, salt, hash
        guard fields.count >= 2, fields[0].isEmpty, !fields[1].isEmpty else { throw .malformed(.structure) }
        guard fields[1] == Self.algorithm else { throw .unsupportedAlgorithm(Self.loggableIdentifier(fields[1])) }
        guard fields.count == 5, fields[2...].allSatisfy({ !$0.isEmpty }) else { throw .malformed(.structure) }

        let values = try Self.parseParameterField(fields[2])
        guard let salt = Base64.decode(fields[3], alphabet: .standard, padding: .none) else { throw .malformed(.saltEncoding) }
        guard let hash = Base64.decode(fields[4], alphabet: .standard, padding: .none) else { throw .malformed(.hashEncoding) }
        self.parameters = try ScryptParameters(
            logN: values.logN, r: values.r, p: values.p, saltLength: salt.count, hashLength: hash.count)
        self.salt = salt
        self.hash = hash
    }

    /// The stored form.
    public var string: String {
        "$\(Self.algorithm)$ln=\(parameters.logN),r=\(parameters.r),p=\(parameters.p)$"
            + Base64.encode(salt, alphabet: .standard, padding: .none) + "$"
            + Base64.encode(hash, alphabet: .standard, padding: .none)
    }

    /// The parameters only: the salt and hash are password-equivalent and stay out of logs.
    public var description: String { "PHCString(\(parameters))" }

    private static func parseParameterField(_ field: Substring) throws(PasswordHashError) -> (logN: Int, r: Int, p: Int) {
        let pairs = field.split(separator: ",", omittingEmptySubsequences: false)
        let names = ["ln", "r", "p"]
        guard pairs.count == names.count else { throw .malformed(.parameters) }
        var values: [Int] = []
        for (pair, name) in zip(pairs, names) {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            guard parts.count == 2, parts[0] == name, let value = canonicalDecimal(parts[1]) else {
                throw .malformed(.parameters)
            }
            values.append(value)
        }
        return (values[0], values[1], values[2])
    }

    /// A non-negative decimal of at most 9 digits without leading zeros, or nil.
    static func canonicalDecimal(_ text: Substring) -> Int? {
        let digits = Array(text.utf8)
        guard (1...9).contains(digits.count),
              digits.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }),
              digits.count == 1 || digits[0] != UInt8(ascii: "0")
        else { return nil }
        return digits.reduce(0) { $0 * 10 + Int($1 - UInt8(ascii: "0")) }
    }

    /// An unknown algorithm identifier, if it is safe to echo (PHC ids are `[a-z0-9-]{1,32}`).
    private static func loggableIdentifier(_ id: Substring) -> String {
        let ok = id.utf8.count <= 32 && id.utf8.allSatisfy {
            (UInt8(ascii: "a")...UInt8(ascii: "z")).contains($0) || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0)
                || $0 == UInt8(ascii: "-")
        }
        return ok ? String(id) : "?"
    }
}
