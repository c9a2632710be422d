import HearthJSON
import HearthRules

#if canImport(Glibc)
import Glibc
#endif

/// Per-check cost under a rules file (by default the repository's reference `rules.json`):
/// a granted read, a denied read, a validated write of one favourite, and a multi-path update.
enum Timing {
    static func favorite(_ id: String, owner: String) -> JSONValue {
        .object([
            "id": .string(id), "name": .string("Oslo"), "createdAt": .int(1_700_000_000_000),
            "createdBy": .string(owner), "latitude": .double(59.91), "longitude": .double(10.75),
        ])
    }

    static func nanoseconds() -> UInt64 {
        var spec = timespec()
        clock_gettime(CLOCK_MONOTONIC, &spec)
        return UInt64(spec.tv_sec) * 1_000_000_000 + UInt64(spec.tv_nsec)
    }

    @discardableResult
    static func measure(_ name: String, iterations: Int, filter: String?, _ body: () -> Bool) -> Double {
        if let filter, !name.contains(filter) { return 0 }
        for _ in 0..<min(1000, iterations) { _ = body() }  // warm up
        var allowed = 0
        let start = nanoseconds()
        for _ in 0..<iterations where body() { allowed += 1 }
        let elapsed = Double(nanoseconds() - start) / Double(iterations)
        print("\(name): \(String(format2: elapsed / 1000)) µs per check (\(allowed)/\(iterations) allowed)")
        return elapsed
    }

    /// Each check with the plain rules and with the rules compiled for coverage, in
    /// `rounds` alternating rounds (the machine's speed drifts), and the probes' overhead
    /// from the sums.
    static func compare(_ name: String, plain: RuleSet, probed: RuleSet, iterations: Int, filter: String?, rounds: Int = 5,
                        _ body: (RuleSet) -> Bool) {
        if let filter, !name.contains(filter) { return }
        var (off, on) = (0.0, 0.0)
        for _ in 0..<rounds {
            off += measure(name + ", coverage off", iterations: iterations, filter: nil) { body(plain) }
            on += measure(name + ", coverage on", iterations: iterations, filter: nil) { body(probed) }
        }
        print("\(name): coverage on costs \(String(format2: (on / off - 1) * 100)) % (\(String(format2: off / Double(rounds) / 1000)) → \(String(format2: on / Double(rounds) / 1000)) µs)")
    }

    static func run(rulesText: String, iterations: Int, only filter: String?, coverage: Bool = false) throws {
        let rules = try RuleSet.compile(rulesText)
        var favorites: [JSONKey: JSONValue] = [:]
        for index in 0..<20 { favorites["f\(index)"] = favorite("f\(index)", owner: "alice") }
        let tree: JSONValue = .object(["users": .object(["alice": .object(["favorites": .object(favorites)])])])
        let data = JSONTreeSource(tree)
        let alice: JSONValue = .object(["uid": .string("alice"), "provider": .string("password"), "token": .object([JSONKey: JSONValue]())])
        let now: Int64 = 1_700_000_000_000
        let readPath = try DataPath(string: "users/alice/favorites")
        let otherPath = try DataPath(string: "users/bob/favorites")
        let writePath = try DataPath(string: "users/alice/favorites/new1")
        let value = favorite("new1", owner: "alice")
        let updates: [(path: DataPath, value: JSONValue?)] = [
            (try DataPath(string: "users/alice/favorites/a1"), favorite("a1", owner: "alice")),
            (try DataPath(string: "users/alice/favorites/a2"), favorite("a2", owner: "alice")),
            (try DataPath(string: "users/alice/favorites/f3"), nil),
        ]

        print("iterations: \(iterations)")
        if coverage {
            let probed = try rules.withCoverage()
            compare("read, granted", plain: rules, probed: probed, iterations: iterations, filter: filter) {
                $0.canRead(readPath, data: data, auth: alice, now: now, query: nil).allowed
            }
            compare("read, denied (other uid)", plain: rules, probed: probed, iterations: iterations, filter: filter) {
                $0.canRead(otherPath, data: data, auth: alice, now: now, query: nil).allowed
            }
            compare("write one favourite, validated", plain: rules, probed: probed, iterations: iterations, filter: filter) {
                $0.canWrite([(writePath, value)], data: data, auth: alice, now: now).allowed
            }
            compare("update 3 paths (2 sets, 1 delete), validated", plain: rules, probed: probed, iterations: iterations, filter: filter) {
                $0.canWrite(updates, data: data, auth: alice, now: now).allowed
            }
            print("sites: \(probed.coverage?.sites.count ?? 0)")
            return
        }
        if filter == nil || filter == "regex" {
            let regexRules = try RuleSet.compile(#"{"rules": {"s": {".write": true, ".validate": "newData.val().matches(/^(a+)+$/)"}}}"#)
            let big: JSONValue = .string(String(repeating: "a", count: 1_000_000) + "b")
            let start = nanoseconds()
            let verdict = regexRules.canWrite([(try DataPath(string: "s"), big)], data: JSONTreeSource(nil), auth: .null, now: now).allowed
            print("1 MB /^(a+)+$/ write check: \(Double(nanoseconds() - start) / 1e6) ms, allowed: \(verdict)")
        }
        measure("read, granted", iterations: iterations, filter: filter) {
            rules.canRead(readPath, data: data, auth: alice, now: now, query: nil).allowed
        }
        measure("read, denied (other uid)", iterations: iterations, filter: filter) {
            rules.canRead(otherPath, data: data, auth: alice, now: now, query: nil).allowed
        }
        measure("write one favourite, validated", iterations: iterations, filter: filter) {
            rules.canWrite([(writePath, value)], data: data, auth: alice, now: now).allowed
        }
        // What the server does before a create queues: the same write, decided
        // without the stored tree, under an ID token's claims.
        let signedIn: JSONValue = .object([
            "uid": .string("alice"), "provider": .string("password"),
            "token": .object([
                "iss": .string("https://securetoken.google.com/hearth"), "aud": .string("hearth"),
                "auth_time": .int(1_700_000_000), "user_id": .string("alice"), "sub": .string("alice"),
                "iat": .int(1_700_000_000), "exp": .int(1_700_003_600), "email": .string("alice@example.com"),
                "email_verified": .bool(false),
                "firebase": .object(["identities": .object(["email": .array([.string("alice@example.com")])]),
                                     "sign_in_provider": .string("password")]),
            ]),
        ])
        measure("write one favourite, decided without data", iterations: iterations, filter: filter) {
            rules.canWriteWithoutData([(writePath, value)], auth: signedIn)?.allowed ?? false
        }
        measure("update 3 paths (2 sets, 1 delete), validated", iterations: iterations, filter: filter) {
            rules.canWrite(updates, data: data, auth: alice, now: now).allowed
        }
    }
}

extension String {
    init(format2 value: Double) {
        let scaled = (value * 100).rounded() / 100
        self = "\(scaled)"
    }
}
