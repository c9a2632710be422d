/// The cost parameters of one scrypt password hash (RFC 7914 §2): N = 2^`logN`, block size
/// `r`, parallelism `p`, plus the salt and output lengths Hearth uses with them.
///
/// Every value is range-checked against the named limits below, both when an operator
/// configures a hasher and when a stored PHC string is read back. The limits exist so a
/// hostile or corrupted stored hash cannot make a sign-in allocate gigabytes or burn
/// seconds of CPU: memory is what libcrypto allocates (`128·r·(N + 2 + p)` bytes) and work
/// is proportional to `N·r·p`.
public struct ScryptParameters: Sendable, Hashable, CustomStringConvertible {
    /// log2 of the CPU/memory cost N.
    public let logN: Int
    /// The block size r.
    public let r: Int
    /// The parallelism p.
    public let p: Int
    /// Random salt bytes per password.
    public let saltLength: Int
    /// Derived-key (stored hash) bytes.
    public let hashLength: Int

    /// N = 2^15, r = 8, p = 1, 16-byte salt, 32-byte hash: ~87 ms and 32 MiB per hash on
    /// the reference machine (docs/linux-notes.md). Raise `logN` when the hardware allows;
    /// `PasswordHasher.needsRehash` then upgrades stored hashes as users sign in.
    public static let `default` = ScryptParameters(unchecked: 15, r: 8, p: 1, saltLength: 16, hashLength: 32)

    /// The largest log2(N) accepted (N = 2^20 needs 1 GiB with r = 8, so the memory limit
    /// usually binds first).
    public static let maxLogN = 20
    /// The largest block size r accepted.
    public static let maxR = 32
    /// The largest parallelism p accepted.
    public static let maxP = 16
    /// The most memory one hash may need: 256 MiB (N = 2^18 with r = 8). This is also the
    /// `maxmem` handed to `EVP_PBE_scrypt`.
    public static let maxMemoryBytes: UInt64 = 256 * 1024 * 1024
    /// The most work one hash may take, as N·r·p: 2^22, four times N = 2^17, r = 8 (~1.3 s
    /// here).
    public static let maxWork: UInt64 = 1 << 22
    /// Salt length bounds (PHC recommends at least 8 bytes; 16 is Hearth's default).
    public static let saltLengthRange = 8...64
    /// Hash length bounds (PHC: at least 10 bytes; Hearth writes 32).
    public static let hashLengthRange = 16...64

    /// Parameters after range checks against the limits above.
    public init(logN: Int, r: Int, p: Int, saltLength: Int = 16, hashLength: Int = 32) throws(PasswordHashError) {
        guard (1...Self.maxLogN).contains(logN) else { throw .parameterOutOfRange(.logN) }
        guard (1...Self.maxR).contains(r) else { throw .parameterOutOfRange(.r) }
        guard (1...Self.maxP).contains(p) else { throw .parameterOutOfRange(.p) }
        guard Self.saltLengthRange.contains(saltLength) else { throw .parameterOutOfRange(.saltLength) }
        guard Self.hashLengthRange.contains(hashLength) else { throw .parameterOutOfRange(.hashLength) }
        let candidate = ScryptParameters(unchecked: logN, r: r, p: p, saltLength: saltLength, hashLength: hashLength)
        guard let memory = candidate.memoryBytes, memory <= Self.maxMemoryBytes else { throw .parameterOutOfRange(.memory) }
        guard candidate.work <= Self.maxWork else { throw .parameterOutOfRange(.work) }
        self = candidate
    }

    private init(unchecked logN: Int, r: Int, p: Int, saltLength: Int, hashLength: Int) {
        self.logN = logN
        self.r = r
        self.p = p
        self.saltLength = saltLength
        self.hashLength = hashLength
    }

    /// N itself.
    public var n: UInt64 { 1 << UInt64(logN) }

    /// The bytes libcrypto allocates for one hash with these parameters.
    public var memoryBytes: UInt64? { Scrypt.memoryRequired(n: n, r: UInt64(r), p: UInt64(p)) }

    /// N·r·p, the unit the work limit is expressed in.
    public var work: UInt64 { n * UInt64(r) * UInt64(p) }

    /// True when any cost in `self` is lower than in `target`, i.e. a hash made with `self`
    /// should be redone with `target` on the next successful sign-in. Salt and hash lengths
    /// count too: a shorter salt or hash is weaker.
    public func isWeaker(than target: ScryptParameters) -> Bool {
        logN < target.logN || r < target.r || p < target.p
            || saltLength < target.saltLength || hashLength < target.hashLength
    }

    public var description: String { "scrypt(ln=\(logN), r=\(r), p=\(p), salt=\(saltLength)B, hash=\(hashLength)B)" }
}
