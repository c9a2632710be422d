import Dispatch
import HearthJSON
import Synchronization
@testable import HearthAuth

extension Array where Element == UInt8 {
    /// Bytes from a hex literal (test vectors); traps on bad input.
    init(hex: String) {
        let digits = Array(hex.utf8)
        precondition(digits.count % 2 == 0, "odd hex length")
        func nibble(_ c: UInt8) -> UInt8 {
            switch c {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): return c - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): return c - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): return c - UInt8(ascii: "A") + 10
            default: preconditionFailure("bad hex digit")
            }
        }
        self = stride(from: 0, to: digits.count, by: 2).map { nibble(digits[$0]) << 4 | nibble(digits[$0 + 1]) }
    }

    var hex: String { Hex.encode(self) }
}

/// Fixed keys and times so token tests are deterministic.
enum Fixture {
    /// RFC 8032 §7.1 test 1 secret key.
    static let rfcSecretKey = [UInt8](hex: "9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60")
    /// An unrelated second key.
    static let otherSecretKey = [UInt8](hex: "4ccd089b28ff96da9db6c346ec114e0f5b8a319f35aba624da8cf6ed4fb8a6fb")

    static let now: Int64 = 1_700_000_000
    static let clock = UnixClock.fixed(now)

    static func key() -> SigningKey { try! SigningKey(rawPrivateKey: rfcSecretKey) }
    static func otherKey() -> SigningKey { try! SigningKey(rawPrivateKey: otherSecretKey) }

    static func verifier(_ keys: [SigningKey] = [key()], now: Int64 = Fixture.now, audience: String? = nil, issuer: String? = nil) -> TokenVerifier {
        TokenVerifier(keys: keys.map(\.verifyingKey), clock: .fixed(now), audience: audience, issuer: issuer)
    }

    /// Minimal valid claims at `Fixture.now`.
    static func claims(sub: JSONValue = "user-1", iat: Int64 = now, exp: Int64 = now + 3600) -> [String: JSONValue] {
        ["sub": sub, "iat": .int(iat), "exp": .int(exp)]
    }

    /// A token signed by `key` over exactly the given header and payload bytes: lets tests
    /// forge anything a signer would refuse to produce.
    static func forge(headerBytes: [UInt8], payloadBytes: [UInt8], key: SigningKey? = Fixture.key()) -> String {
        let input = Base64.urlEncode(headerBytes) + "." + Base64.urlEncode(payloadBytes)
        let signature = key.map { try! $0.sign(Array(input.utf8)) } ?? []
        return input + "." + Base64.urlEncode(signature)
    }

    static func forge(header: JSONValue, payload: JSONValue, key: SigningKey? = Fixture.key()) -> String {
        forge(headerBytes: JSONWriter.write(header), payloadBytes: JSONWriter.write(payload), key: key)
    }

    static func header(kid: String = Fixture.key().kid) -> JSONValue {
        ["alg": "EdDSA", "kid": .string(kid), "typ": "JWT"]
    }
}

/// HMAC-SHA256 (RFC 2104) built on the library's SHA-256, only to forge HS256 tokens.
func hmacSHA256(key: [UInt8], message: [UInt8]) -> [UInt8] {
    let blockSize = 64
    var k = key.count > blockSize ? SHA256.hash(key) : key
    k += [UInt8](repeating: 0, count: blockSize - k.count)
    let inner = SHA256.hash(k.map { $0 ^ 0x36 } + message)
    return SHA256.hash(k.map { $0 ^ 0x5c } + inner)
}

/// Collects `expected` results delivered from any thread, for awaiting callbacks.
final class Collector<T: Sendable>: Sendable {
    private struct State {
        var results: [T] = []
        var waiter: CheckedContinuation<[T], Never>?
    }

    private let expected: Int
    private let state = Mutex(State())

    init(expecting expected: Int) {
        self.expected = expected
    }

    func record(_ value: T) {
        let finished: (CheckedContinuation<[T], Never>, [T])? = state.withLock { state in
            state.results.append(value)
            guard state.results.count == expected, let waiter = state.waiter else { return nil }
            state.waiter = nil
            return (waiter, state.results)
        }
        if let (waiter, results) = finished { waiter.resume(returning: results) }
    }

    func wait() async -> [T] {
        await withCheckedContinuation { continuation in
            let ready: [T]? = state.withLock { state in
                if state.results.count >= expected { return state.results }
                state.waiter = continuation
                return nil
            }
            if let ready { continuation.resume(returning: ready) }
        }
    }
}
