import HearthStore
import Synchronization

/// Password guessing slowed without locking the owner out.
///
/// Every sign-in attempt for an account counts as a failure of its (account, address)
/// pair until it succeeds (so concurrent guesses cannot all slip past before the first
/// is judged); a success forgets the pair's failures.
///
/// - **Per (account, address):** `freeFailures` wrong passwords, then each further attempt
///   waits `firstBackoffSeconds`, doubling per failure up to `maxBackoffSeconds`.
/// - **Per account (distributed guessing):** past `accountFailureThreshold` failures from
///   all addresses, an address that has failed for this account recently also waits by
///   the account's count (doubling every `accountFailureStep` failures, same cap) after
///   its last failure. An address with no recent failure for the account is never held
///   back by the account's count: the owner, from their own device, gets in.
/// - Failures are forgotten `failureMemorySeconds` after the last one.
///
/// Per-address limits across accounts (credential stuffing) stay with `RateLimiter`.
/// Waits are exact: the `Retry-After` answered is when the next attempt is accepted.
public final class SignInThrottle: Sendable {
    public static let freeFailures = 5
    public static let firstBackoffSeconds: Int64 = 1
    public static let maxBackoffSeconds: Int64 = 900
    public static let accountFailureThreshold = 100
    public static let accountFailureStep = 10
    public static let failureMemorySeconds: Int64 = 3600
    /// Pairs and accounts tracked at most; past it, forgotten ones are dropped, then all
    /// (memory stays bounded under a flood of addresses).
    public static let defaultMaxTrackedKeys = 100_000

    struct Pair {
        var failures = 0
        var last: Int64 = 0
    }

    struct Account {
        var failures = 0
        var last: Int64 = 0
    }

    struct State {
        var pairs: [String: Pair] = [:]
        var accounts: [String: Account] = [:]
    }

    private let state = Mutex(State())
    private let clock: @Sendable () -> Int64
    let maxTrackedKeys: Int
    /// Counters every node shares; nil: this process's memory.
    private let shared: (any LimitCounters)?

    /// - Parameters:
    ///   - clock: seconds; injected so tests need no sleeps.
    ///   - shared: counters shared by several nodes.
    public init(maxTrackedKeys: Int = defaultMaxTrackedKeys, clock: @escaping @Sendable () -> Int64, shared: (any LimitCounters)? = nil) {
        self.clock = clock
        self.maxTrackedKeys = maxTrackedKeys
        self.shared = shared
    }

    /// The shared counters' keys of a pair and an account.
    private static func sharedKeys(_ account: String, _ address: String) -> (pair: String, account: String) {
        // U+0001, not `pairKey`'s NUL: PostgreSQL text cannot hold NUL.
        ("throttle:pair:" + account + "\u{1}" + address, "throttle:account:" + account)
    }

    public static func pairKey(_ account: String, _ address: String) -> String { account + "\u{0}" + address }

    /// The wait after `failures` failures beyond the free ones (0 when none).
    public static func backoff(beyond count: Int) -> Int64 {
        guard count > 0 else { return 0 }
        let doublings = min(count - 1, 20)
        return min(maxBackoffSeconds, firstBackoffSeconds << Int64(doublings))
    }

    /// Counts an attempt for `account` from `address`: nil when it may go ahead (it is
    /// counted as a failure until `succeeded`), else the seconds until one may.
    public func attempt(account: String, address: String) -> Int? {
        let now = clock()
        if let shared {
            let keys = Self.sharedKeys(account, address)
            return try? shared.update([keys.pair, keys.account], now: now, keepSeconds: Self.failureMemorySeconds) { records in
                let stored = (records[keys.pair] ?? LimitRecord(), records[keys.account] ?? LimitRecord())
                var pair = Pair(failures: Int(stored.0.count), last: stored.0.last)
                var acct = Account(failures: Int(stored.1.count), last: stored.1.last)
                let wait = Self.decide(pair: &pair, account: &acct, now: now)
                records[keys.pair] = LimitRecord(count: Int64(pair.failures), start: 0, last: pair.last)
                records[keys.account] = LimitRecord(count: Int64(acct.failures), start: 0, last: acct.last)
                return wait
            } ?? nil
        }
        let key = Self.pairKey(account, address)
        return state.withLock { state in
            Self.bound(&state, now: now, max: maxTrackedKeys)
            var pair = state.pairs[key] ?? Pair()
            var acct = state.accounts[account] ?? Account()
            let wait = Self.decide(pair: &pair, account: &acct, now: now)
            if wait == nil {
                state.pairs[key] = pair
                state.accounts[account] = acct
            }
            return wait
        }
    }

    /// The rule for one attempt: nil when it may go ahead (then counted in `pair` and
    /// `account`), else the seconds until one may.
    private static func decide(pair: inout Pair, account acct: inout Account, now: Int64) -> Int? {
        if pair.failures > 0 && now - pair.last >= Self.failureMemorySeconds { pair = Pair() }
        if acct.failures > 0 && now - acct.last >= Self.failureMemorySeconds { acct = Account() }
        var until = pair.last + Self.backoff(beyond: pair.failures - Self.freeFailures + 1)
        if pair.failures > 0 && acct.failures >= Self.accountFailureThreshold {
            let step = (acct.failures - Self.accountFailureThreshold) / Self.accountFailureStep + 1
            until = max(until, pair.last + Self.backoff(beyond: step))
        }
        if pair.failures >= Self.freeFailures || (pair.failures > 0 && acct.failures >= Self.accountFailureThreshold), until > now {
            return Int(until - now)
        }
        pair.failures += 1
        pair.last = now
        acct.failures += 1
        acct.last = now
        return nil
    }

    /// The attempt was right: the pair's failures are forgotten, and the account's count
    /// loses the one the attempt added.
    public func succeeded(account: String, address: String) {
        if let shared {
            let keys = Self.sharedKeys(account, address)
            _ = try? shared.update([keys.pair, keys.account], now: clock(), keepSeconds: Self.failureMemorySeconds) { records in
                records[keys.pair] = nil
                if var acct = records[keys.account] {
                    acct.count = max(0, acct.count - 1)
                    records[keys.account] = acct.count == 0 ? nil : acct
                }
            }
            return
        }
        state.withLock { state in
            state.pairs[Self.pairKey(account, address)] = nil
            if var acct = state.accounts[account] {
                acct.failures = max(0, acct.failures - 1)
                state.accounts[account] = acct.failures == 0 ? nil : acct
            }
        }
    }

    public var trackedKeys: Int { state.withLock { $0.pairs.count + $0.accounts.count } }

    private static func bound(_ state: inout State, now: Int64, max: Int) {
        guard state.pairs.count + state.accounts.count >= max else { return }
        state.pairs = state.pairs.filter { now - $0.value.last < failureMemorySeconds }
        state.accounts = state.accounts.filter { now - $0.value.last < failureMemorySeconds }
        if state.pairs.count + state.accounts.count >= max {
            state.pairs.removeAll(keepingCapacity: true)
            state.accounts.removeAll(keepingCapacity: true)
        }
    }
}
