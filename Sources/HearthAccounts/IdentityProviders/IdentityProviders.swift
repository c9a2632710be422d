import Dispatch
import Foundation
import HearthAuth
import HearthHTTPClient
import HearthJSON
import Synchronization

/// The configured identity providers and their keys. Keys from a URL are
/// fetched when first needed, refreshed in the background every `refreshIntervalSeconds`,
/// fetched again at once when a token names an unknown `kid` (at most once per
/// `unknownKeyRefreshSeconds` per provider), and kept on disk in `cacheDirectory` so a
/// restart without network still verifies. A slow or unreachable provider delays a
/// sign-in by at most `fetchTimeoutSeconds` (twice that when a background fetch is under
/// way). Keys from a file are read once, at start.
///
/// A fetch for an unknown `kid` runs on a thread of its own; the tokens that need it wait
/// as callbacks (`whenKeysFetched`), at most `maxWaitingPerProvider` per provider, so a
/// provider that never answers holds no thread of the server's work queues and never
/// delays the checks of other tokens (Hearth's own, other providers').
public final class IdentityProviders: Sendable {
    /// The longest a key fetch may take (connect, each read, the whole exchange), seconds:
    /// the default of `init`'s `fetchTimeoutSeconds`.
    public static let fetchTimeoutSeconds = 5
    /// How often keys are fetched again in the background, seconds.
    public static let refreshIntervalSeconds: Int64 = 3600
    /// An unknown `kid` fetches the keys again at most this often per provider, seconds.
    public static let unknownKeyRefreshSeconds: Int64 = 60
    /// The largest key document read.
    public static let maxKeyDocumentBytes = 256 * 1024
    /// The cache's subdirectory of the data directory.
    public static let cacheSubdirectory = "idp-keys"
    /// Tokens that may wait for one provider's key fetch at once; past it a token that
    /// needs the fetch is decided at once without the keys (refused): what one provider
    /// that never answers can hold is this many callbacks, never a thread.
    public static let maxWaitingPerProvider = 64

    final class Entry: Sendable {
        let provider: IdentityProvider
        struct State {
            var keys: [String: ProviderKey] = [:]
            var fetchedAt: Int64?
            /// When a token's unknown `kid` last caused a fetch (the background rounds do not count).
            var lastUnknownKeyFetch: Int64?
        }
        let state = Mutex(State())
        /// Held while this provider's keys are fetched: one fetch at a time (the background
        /// refresh's and one for an unknown `kid`).
        let fetching = Mutex(())
        /// The fetch for an unknown `kid` under way, and who waits for it.
        struct Pending {
            var running = false
            var waiters: [@Sendable () -> Void] = []
        }
        let pending = Mutex(Pending())
        init(_ provider: IdentityProvider) { self.provider = provider }
    }

    let entries: [String: Entry]
    let cacheDirectory: String?
    let client: HTTPClient
    let fetchTimeoutSeconds: Int
    /// Seconds since the epoch.
    let clock: @Sendable () -> Int64

    /// The providers; keys from files are read now (an unusable file throws), cached keys
    /// of URL providers are loaded from `cacheDirectory`.
    public init(_ providers: [IdentityProvider], cacheDirectory: String?, caFile: String? = nil,
                fetchTimeoutSeconds: Int = IdentityProviders.fetchTimeoutSeconds,
                clock: @escaping @Sendable () -> Int64 = { Int64(Date().timeIntervalSince1970) }) throws(IdentityProviderError) {
        self.cacheDirectory = cacheDirectory
        self.fetchTimeoutSeconds = fetchTimeoutSeconds
        self.client = HTTPClient(timeoutSeconds: fetchTimeoutSeconds, maxResponseBytes: Self.maxKeyDocumentBytes, caFile: caFile)
        self.clock = clock
        var entries: [String: Entry] = [:]
        for provider in providers {
            let entry = Entry(provider)
            switch provider.keys {
            case .file(let path):
                guard let bytes = Self.read(path) else { throw IdentityProviderError("\(provider.providerID): jwksFile \(path) cannot be read") }
                guard let keys = Self.keys(bytes, provider.format) else {
                    throw IdentityProviderError("\(provider.providerID): jwksFile \(path) holds no RS256 or ES256 key")
                }
                entry.state.withLock { $0.keys = keys; $0.fetchedAt = clock() }
            case .url:
                if let bytes = Self.cachePath(provider, in: cacheDirectory).flatMap(Self.read), let keys = Self.keys(bytes, provider.format) {
                    entry.state.withLock { $0.keys = keys }  // fetchedAt nil: refreshed at the first chance
                }
            }
            entries[provider.providerID] = entry
        }
        self.entries = entries
    }

    /// The providers in a providers file.
    public convenience init(file path: String, cacheDirectory: String?, caFile: String? = nil,
                            fetchTimeoutSeconds: Int = IdentityProviders.fetchTimeoutSeconds) throws(IdentityProviderError) {
        guard let bytes = Self.read(path, limit: IdentityProvider.maxFileBytes) else {
            throw IdentityProviderError("\(path) cannot be read (or is larger than \(IdentityProvider.maxFileBytes) bytes)")
        }
        try self.init(try IdentityProvider.parse(bytes), cacheDirectory: cacheDirectory, caFile: caFile, fetchTimeoutSeconds: fetchTimeoutSeconds)
    }

    public func provider(_ id: String) -> IdentityProvider? { entries[id]?.provider }
    public var providerIDs: [String] { entries.keys.sorted() }

    /// The verified claims of `token` from provider `id`; when it names a `kid` not among
    /// the keys (or there are none yet), the keys are fetched first, at most once per
    /// `unknownKeyRefreshSeconds`.
    /// With `fetchKeys` false nothing is fetched: an unknown `kid` is refused at once (after
    /// `whenKeysFetched`, the check that does not wait).
    public func verify(_ token: String, provider id: String, fetchKeys: Bool = true) throws(ProviderTokenFailureOrKeys) -> [JSONKey: JSONValue] {
        guard let entry = entries[id] else { throw .notConfigured }
        do {
            return try verifier(entry).verify(token)
        } catch .unknownKeyID {
            guard fetchKeys, let kid = ProviderTokenVerifier.keyID(of: token), refresh(entry, forUnknown: kid) else {
                throw entry.state.withLock({ $0.keys.isEmpty }) ? .keysUnavailable : .token(.unknownKeyID)
            }
            do { return try verifier(entry).verify(token) } catch { throw .token(error) }
        } catch {
            throw .token(error)
        }
    }

    /// Whether checking `token` with provider `id` would fetch keys: the provider's keys
    /// come from a URL and the token names a `kid` not among them.
    public func needsKeyFetch(_ token: String, provider id: String) -> Bool {
        guard let entry = entries[id], case .url = entry.provider.keys, let kid = ProviderTokenVerifier.keyID(of: token) else { return false }
        return entry.state.withLock { $0.keys[kid] == nil }
    }

    /// Calls `done` once provider `id`'s keys were fetched for `token`'s `kid` (then check it
    /// with `fetchKeys: false`), or at once when no fetch is needed or allowed (an unknown
    /// `kid` fetched within `unknownKeyRefreshSeconds`), or when `maxWaitingPerProvider`
    /// already wait. No thread waits meanwhile: `done` runs on the fetch's thread or the
    /// caller's.
    public func whenKeysFetched(for token: String, provider id: String, _ done: @escaping @Sendable () -> Void) {
        guard let entry = entries[id], let kid = ProviderTokenVerifier.keyID(of: token) else { return done() }
        whenFetched(entry, forUnknown: kid, done)
    }

    /// Tokens waiting for provider `id`'s key fetch (for tests and metrics).
    func waitingForKeys(provider id: String) -> Int {
        entries[id]?.pending.withLock { $0.waiters.count } ?? 0
    }

    private func verifier(_ entry: Entry) -> ProviderTokenVerifier {
        let clock = self.clock
        // A Firebase project's ID tokens are bearer credentials for data: capped as Firebase issues them.
        let maxLifetime = entry.provider.providerID == IdentityProvider.firebase ? ProviderTokenVerifier.firebaseProjectMaxLifetime : nil
        return ProviderTokenVerifier(keys: entry.state.withLock { $0.keys }, issuers: entry.provider.issuers,
                                     audiences: entry.provider.audiences, clock: UnixClock { clock() }, maxLifetime: maxLifetime)
    }

    /// Fetches the keys of every URL provider (the background refresh's work); returns the
    /// ids of those whose fetch failed.
    @discardableResult
    public func refreshAll() -> [String] {
        entries.values.sorted { $0.provider.providerID < $1.provider.providerID }.compactMap { entry in
            guard case .url = entry.provider.keys else { return nil }
            return entry.fetching.withLock { _ in fetch(entry) } ? nil : entry.provider.providerID
        }
    }

    /// Refreshes every provider's keys every `refreshIntervalSeconds` on a utility queue, the
    /// first time at once; ends when this object is released. `report` hears each round's
    /// failures (provider ids).
    public func startBackgroundRefresh(report: @escaping @Sendable ([String]) -> Void = { _ in }) {
        guard entries.values.contains(where: { if case .url = $0.provider.keys { true } else { false } }) else { return }
        Self.scheduleRefresh(of: self, on: DispatchQueue(label: "hearth.idp.keys", qos: .utility), after: .now(), report: report)
    }

    private static func scheduleRefresh(of providers: IdentityProviders, on queue: DispatchQueue, after time: DispatchTime,
                                        report: @escaping @Sendable ([String]) -> Void) {
        queue.asyncAfter(deadline: time) { [weak providers] in
            guard let providers else { return }
            let failed = providers.refreshAll()
            if !failed.isEmpty { report(failed) }
            scheduleRefresh(of: providers, on: queue, after: .now() + .seconds(Int(refreshIntervalSeconds)), report: report)
        }
    }

    /// Fetches `entry`'s keys for a token whose `kid` is not among them, blocking (a sign-in
    /// on a work queue): waits for a fetch under way, or starts one unless an unknown `kid`
    /// caused a fetch within `unknownKeyRefreshSeconds`, as `whenFetched`; at most for a
    /// background fetch under way and this one. True when `kid` is now known.
    func refresh(_ entry: Entry, forUnknown kid: String) -> Bool {
        guard case .url = entry.provider.keys else { return false }
        let fetched = DispatchSemaphore(value: 0)
        whenFetched(entry, forUnknown: kid) { fetched.signal() }
        _ = fetched.wait(timeout: .now() + .seconds(2 * fetchTimeoutSeconds + 1))
        return entry.state.withLock { $0.keys[kid] != nil }
    }

    /// `done` after the fetch of `entry`'s keys for `kid` (see `whenKeysFetched`). The fetch
    /// runs on a thread of its own, one per provider at a time, serialized with the
    /// background refresh; the waiters are called when it ends, whatever its outcome.
    func whenFetched(_ entry: Entry, forUnknown kid: String, _ done: @escaping @Sendable () -> Void) {
        guard case .url = entry.provider.keys else { return done() }
        enum Decision { case now, wait, start }
        let now = clock()
        let decision = entry.pending.withLock { pending -> Decision in
            if entry.state.withLock({ $0.keys[kid] != nil }) { return .now }
            if pending.running {
                guard pending.waiters.count < Self.maxWaitingPerProvider else { return .now }
                pending.waiters.append(done)
                return .wait
            }
            let allowed = entry.state.withLock { state -> Bool in
                if let last = state.lastUnknownKeyFetch, now - last < Self.unknownKeyRefreshSeconds { return false }
                state.lastUnknownKeyFetch = now
                return true
            }
            guard allowed else { return .now }
            pending = Entry.Pending(running: true, waiters: [done])
            return .start
        }
        switch decision {
        case .now: done()
        case .wait: break
        case .start:
            Thread.detachNewThread { [self] in
                entry.fetching.withLock { _ in
                    // A background fetch that just ended may have brought it.
                    if entry.state.withLock({ $0.keys[kid] == nil }) { _ = fetch(entry) }
                }
                let waiters = entry.pending.withLock { pending in
                    defer { pending = Entry.Pending() }
                    return pending.waiters
                }
                for waiter in waiters { waiter() }
            }
        }
    }

    /// Fetches and installs `entry`'s keys (caller holds `entry.fetching`); true on success.
    func fetch(_ entry: Entry) -> Bool {
        guard case .url(let url) = entry.provider.keys, let bytes = fetch(url),
              let keys = Self.keys(bytes, entry.provider.format) else { return false }
        let now = clock()
        entry.state.withLock { $0.keys = keys; $0.fetchedAt = now }
        if let path = cachePath(entry.provider) { Self.write(bytes, to: path) }
        return true
    }

    func fetch(_ url: String) -> [UInt8]? {
        guard let target = try? HTTPURL(url), let response = try? client.send(HTTPClientRequest(url: target)),
              response.isSuccess else { return nil }
        return response.body
    }

    static func keys(_ bytes: [UInt8], _ format: IdentityProvider.KeyFormat) -> [String: ProviderKey]? {
        switch format {
        case .jwks: return ProviderKeySet.keys(jwks: bytes)
        case .x509: return ProviderKeySet.keys(certificates: bytes)
        }
    }

    func cachePath(_ provider: IdentityProvider) -> String? { Self.cachePath(provider, in: cacheDirectory) }

    static func cachePath(_ provider: IdentityProvider, in cacheDirectory: String?) -> String? {
        guard let cacheDirectory else { return nil }
        return cacheDirectory + "/" + Self.cacheSubdirectory + "/" + provider.providerID + ".json"
    }

    static func read(_ path: String) -> [UInt8]? { read(path, limit: maxKeyDocumentBytes) }

    static func read(_ path: String, limit: Int) -> [UInt8]? {
        guard let handle = FileHandle(forReadingAtPath: path) else { return nil }
        defer { try? handle.close() }
        guard let data = (try? handle.read(upToCount: limit + 1)) ?? nil, data.count <= limit else { return nil }
        return Array(data)
    }

    /// Writes the cache file atomically (a crash leaves the old one); failures are ignored:
    /// the cache only spares a restart the network.
    static func write(_ bytes: [UInt8], to path: String) {
        let url = URL(fileURLWithPath: path)
        try? FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true,
                                                 attributes: [.posixPermissions: 0o700])
        try? Data(bytes).write(to: url, options: .atomic)
    }
}

/// Why a provider's token was not accepted: the token itself, no keys to check it with,
/// or a provider that is not configured.
public enum ProviderTokenFailureOrKeys: Error, Sendable, Equatable {
    case token(ProviderTokenFailure)
    case keysUnavailable
    case notConfigured
}
