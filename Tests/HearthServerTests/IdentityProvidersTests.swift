import Dispatch
import Foundation
import HearthAuth
import HearthSystem
import HearthTesting
import Synchronization
import Testing
@testable import HearthAccounts

/// The providers file and the key cache, with a clock the test moves.
@Suite struct IdentityProvidersTests {
    final class ManualClock: Sendable {
        let seconds = Mutex(Int64(Date().timeIntervalSince1970))
        func advance(_ by: Int64) { seconds.withLock { $0 += by } }
        var now: Int64 { seconds.withLock { $0 } }
    }

    static func providers(_ provider: TestOpenIDProvider, clock: ManualClock, cache: String? = nil) throws -> IdentityProviders {
        try IdentityProviders([IdentityProvider(providerID: "oidc.test", issuers: [provider.issuer], audiences: ["com.example.app"],
                                                keys: .url(provider.jwksURL))],
                              cacheDirectory: cache, clock: { clock.now })
    }

    @Test func aRotatedKeyIsFetchedAtOnceAndAnUnknownKidAtMostOnceAMinute() throws {
        let provider = try TestOpenIDProvider()
        let clock = ManualClock()
        let providers = try Self.providers(provider, clock: clock)
        let now = Int(clock.now)
        #expect(try providers.verify(provider.mint(now: now), provider: "oidc.test")["sub"] == "provider-user-1")
        #expect(provider.jwksFetches == 1)
        clock.advance(IdentityProviders.unknownKeyRefreshSeconds)
        let rotated = TestOpenIDProvider.newKey(ec: false, kid: "rsa-2")
        provider.publish([rotated])
        #expect(try providers.verify(provider.mint(key: rotated, now: now), provider: "oidc.test")["sub"] == "provider-user-1")
        #expect(provider.jwksFetches == 2)
        // Within the minute another unknown kid fetches nothing.
        clock.advance(IdentityProviders.unknownKeyRefreshSeconds - 1)
        let later = TestOpenIDProvider.newKey(ec: true, kid: "ec-2")
        provider.publish([rotated, later])
        #expect(throws: ProviderTokenFailureOrKeys.token(.unknownKeyID)) {
            try providers.verify(provider.mint(key: later, now: now), provider: "oidc.test")
        }
        #expect(provider.jwksFetches == 2)
        // A minute after the last one it does.
        clock.advance(1)
        #expect(try providers.verify(provider.mint(key: later, now: now), provider: "oidc.test")["sub"] == "provider-user-1")
        #expect(provider.jwksFetches == 3)
    }

    @Test func theBackgroundRefreshReplacesTheKeys() throws {
        let provider = try TestOpenIDProvider()
        let clock = ManualClock()
        let providers = try Self.providers(provider, clock: clock)
        #expect(providers.refreshAll() == [])
        let rotated = TestOpenIDProvider.newKey(ec: true, kid: "ec-9")
        provider.publish([rotated])
        #expect(providers.refreshAll() == [])
        #expect(provider.jwksFetches == 2)
        #expect(throws: ProviderTokenFailureOrKeys.token(.unknownKeyID)) {
            // The old key is gone: an unknown kid now, and the unknown-kid fetch finds it gone too.
            try providers.verify(provider.mint(now: Int(clock.now)), provider: "oidc.test")
        }
        #expect(try providers.verify(provider.mint(key: rotated, now: Int(clock.now)), provider: "oidc.test")["sub"] == "provider-user-1")
    }

    /// Tokens waiting for a key fetch are callbacks, at most `maxWaitingPerProvider`: with
    /// a key URL that never answers, the next is decided at once (before the call returns),
    /// and the waiting ones when the fetch ends; one fetch serves them all.
    @Test func waitersForAKeyFetchAreBoundedAndHoldNoThread() throws {
        let stalled = try StalledListener()
        defer { stalled.stop() }
        let provider = try TestOpenIDProvider()
        let clock = ManualClock()
        let providers = try IdentityProviders([IdentityProvider(providerID: "oidc.test", issuers: [provider.issuer], audiences: ["com.example.app"],
                                                                keys: .url("http://127.0.0.1:\(stalled.port)/jwks"))],
                                              cacheDirectory: nil, clock: { clock.now })
        let called = Mutex(0)
        let bound = IdentityProviders.maxWaitingPerProvider
        for n in 0..<bound {
            let token = provider.mint(header: ["kid": "k\(n)"])
            #expect(providers.needsKeyFetch(token, provider: "oidc.test"))
            providers.whenKeysFetched(for: token, provider: "oidc.test") { called.withLock { $0 += 1 } }
        }
        try pollUntil("the fetch under way") { stalled.accepted == 1 }
        #expect(providers.waitingForKeys(provider: "oidc.test") == bound && called.withLock { $0 } == 0)
        let past = Mutex(false)
        providers.whenKeysFetched(for: provider.mint(header: ["kid": "one-more"]), provider: "oidc.test") { past.withLock { $0 = true } }
        #expect(past.withLock { $0 }, "past the bound: decided at once")
        #expect(throws: ProviderTokenFailureOrKeys.keysUnavailable) {
            try providers.verify(provider.mint(header: ["kid": "one-more"]), provider: "oidc.test", fetchKeys: false)
        }
        stalled.release()
        try pollUntil("every waiter called") { called.withLock { $0 } == bound }
        #expect(providers.waitingForKeys(provider: "oidc.test") == 0 && stalled.accepted == 1)
        #expect(!providers.needsKeyFetch(provider.mint(), provider: "none"))
    }

    @Test func firebaseProjectKeysComeAsCertificates() throws {
        let provider = try TestOpenIDProvider()
        let clock = ManualClock()
        let providers = try IdentityProviders([IdentityProvider(providerID: "firebase", issuers: [provider.issuer], audiences: ["my-project"],
                                                                keys: .url(provider.certificatesURL), format: .x509, projectID: "my-project")],
                                              cacheDirectory: nil, clock: { clock.now })
        #expect(try providers.verify(provider.mint(audience: "my-project", now: Int(clock.now)), provider: "firebase")["aud"] == "my-project")
        #expect(provider.certificateFetches == 1)
        // Its tokens are bearer credentials for data: one living ten years is refused.
        let tenYears = provider.mint(audience: "my-project", overrides: ["exp": Int(clock.now) + 10 * 365 * 24 * 3600], now: Int(clock.now))
        #expect(throws: ProviderTokenFailureOrKeys.token(.lifetimeTooLong)) { try providers.verify(tenYears, provider: "firebase") }
    }

    @Test func aKeysFileIsReadAtStartAndAnUnusableOneStopsIt() throws {
        let provider = try TestOpenIDProvider()
        let directory = TemporaryDirectory(prefix: "hearth-idp-file")
        let path = directory.path + "/jwks.json"
        try writeFile(path, #"{"keys": [\#(String(decoding: try JSONSerialization.data(withJSONObject: provider.ec.jwk), as: UTF8.self))]}"#)
        let providers = try IdentityProviders([IdentityProvider(providerID: "oidc.test", issuers: [provider.issuer], audiences: ["com.example.app"],
                                                                keys: .file(path))], cacheDirectory: nil)
        #expect(try providers.verify(provider.mint(key: provider.ec), provider: "oidc.test")["sub"] == "provider-user-1")
        #expect(provider.jwksFetches == 0)
        try writeFile(path, #"{"keys": []}"#)
        #expect(throws: IdentityProviderError.self) {
            try IdentityProviders([IdentityProvider(providerID: "oidc.test", issuers: ["x"], audiences: ["a"], keys: .file(path))], cacheDirectory: nil)
        }
    }

    static func parse(_ text: String) throws(IdentityProviderError) -> [IdentityProvider] {
        try IdentityProvider.parse(Array(text.utf8))
    }

    @Test func theProvidersFileHasDefaultsForGoogleAppleAndFirebase() throws {
        let providers = try Self.parse("""
            {"providers": [{"providerId": "google.com", "audiences": ["client.apps.googleusercontent.com"]},
                           {"providerId": "apple.com", "audiences": ["com.example.weather"]},
                           {"providerId": "firebase", "projectId": "my-project"},
                           {"providerId": "oidc.corp", "issuer": "https://login.corp.example", "audiences": ["a"], "jwksURL": "https://login.corp.example/keys"}]}
            """)
        #expect(providers[0].issuers == IdentityProvider.googleIssuers)
        #expect(providers[0].keys == .url(IdentityProvider.googleKeysURL))
        #expect(providers[1].issuers == [IdentityProvider.appleIssuer])
        #expect(providers[2].issuers == ["https://securetoken.google.com/my-project"])
        #expect(providers[2].audiences == ["my-project"])
        #expect(providers[2].format == .x509)
        #expect(providers[3].keys == .url("https://login.corp.example/keys"))
    }

    @Test(arguments: [
        (#"{"providers": [{"providerId": "oidc.x", "issuer": "i", "audiences": ["a"], "jwksURL": "http://keys.example.com/k"}]}"#, "loopback"),
        (#"{"providers": [{"providerId": "oidc.x", "issuer": "i", "audiences": ["a"], "jwksURL": "ftp://k"}]}"#, "https://"),
        (#"{"providers": [{"providerId": "facebook.com", "audiences": ["a"]}]}"#, "providerId must be"),
        (#"{"providers": [{"providerId": "oidc.x", "audiences": ["a"], "jwksURL": "https://k"}]}"#, "needs issuer"),
        (#"{"providers": [{"providerId": "google.com"}]}"#, "audiences is missing"),
        (#"{"providers": [{"providerId": "firebase"}]}"#, "needs projectId"),
        (#"{"providers": [{"providerId": "google.com", "audiences": ["a"]}, {"providerId": "google.com", "audiences": ["b"]}]}"#, "listed twice"),
        (#"{"providers": [{"providerId": "google.com", "audiences": ["a"], "jwksURL": "https://k", "jwksFile": "/k"}]}"#, "not both"),
        (#"{"providers": [{"providerId": "google.com", "audiences": ["a"], "secret": "x"}]}"#, "unknown field"),
        (#"[]"#, "not a JSON object"),
    ])
    func aBadProvidersFileIsRefusedWithItsReason(_ text: String, _ reason: String) {
        #expect(throws: IdentityProviderError.self) { try Self.parse(text) }
        do { _ = try Self.parse(text) } catch { #expect(error.description.contains(reason), "\(error.description)") }
    }

    @Test func loopbackHTTPKeyURLsAreAllowed() throws {
        for url in ["http://127.0.0.1:8080/jwks", "http://localhost/jwks", "http://[::1]:9/jwks", "http://[::1]/", "HTTP://LOCALHOST:8080/k",
                    "http://127.255.0.9/k", "http://[0:0:0:0:0:0:0:1]/k", "http://[0000::0001]:1/k", "https://keys.example.com/k", "HTTPS://k.example/"] {
            #expect(try Self.parse(#"{"providers": [{"providerId": "oidc.x", "issuer": "i", "audiences": ["a"], "jwksURL": "\#(url)"}]}"#).count == 1, "\(url)")
        }
    }

    /// The host is parsed and judged whole: names that merely begin like a loopback
    /// address, user information, other spellings resolvers read differently.
    @Test(arguments: [
        "http://127.0.0.1.nip.io/", "http://127.0.0.1.nip.io:8080/k", "http://127.0.0.1@evil.com/", "http://localhost@evil.com/",
        "http://evil.com#@127.0.0.1/", "http://localhost.evil.com/", "http://localhost./", "http://127.0.0/", "http://127.0.0.1.2/",
        "http://0177.0.0.1/", "http://127.0.0.01/", "http://2130706433/", "http://127.0.0.256/", "http://[::2]/", "http://[::ffff:127.0.0.1]/",
        "http://[::1::]/", "http://[1:0:0:0:0:0:0:1]/", "http://128.0.0.1/", "http://10.0.0.1/", "http://[::1]x/", "http://127.0.0.1:0/",
    ])
    func nonLoopbackHTTPKeyURLsAreRefused(_ url: String) {
        let text = #"{"providers": [{"providerId": "oidc.x", "issuer": "i", "audiences": ["a"], "jwksURL": "\#(url)"}]}"#
        do {
            _ = try Self.parse(text)
            Issue.record("accepted \(url)")
        } catch {
            #expect(error.description.hasPrefix("providers[0]: jwksURL "), "\(error.description)")
        }
    }

    @Test func theLoopbackTestFromLiterals() {
        #expect(KeySourceURL.isLoopback(host: "127.0.0.1") && KeySourceURL.isLoopback(host: "127.1.2.3") && KeySourceURL.isLoopback(host: "LocalHost"))
        #expect(KeySourceURL.isLoopback(host: "::1") && KeySourceURL.isLoopback(host: "0::1") && KeySourceURL.isLoopback(host: "0:0:0:0:0:0:0:1"))
        for host in ["127.0.0.1.nip.io", "127.", "127..0.1", "::", "::01:1", "1::1", "::1:0", "+::1", "::+1", "::g", "127.0.0.1 ", "localhost.", ""] {
            #expect(!KeySourceURL.isLoopback(host: host), "\(host)")
        }
        #expect(LoopbackHost.ipv6Groups("1:2:3:4:5:6:7:8") == [1, 2, 3, 4, 5, 6, 7, 8])
        #expect(LoopbackHost.ipv6Groups("1:2:3:4:5:6:7") == nil && LoopbackHost.ipv6Groups("1::2::3") == nil && LoopbackHost.ipv6Groups("12345::") == nil)
    }

    @Test func aProvidersFileLargerThanTheLimitIsRefused() {
        let text = #"{"providers": [], "pad": ""# + String(repeating: "x", count: IdentityProvider.maxFileBytes) + #""}"#
        #expect(throws: IdentityProviderError("the file is larger than \(IdentityProvider.maxFileBytes) bytes")) { try Self.parse(text) }
    }

    @Test func moreProvidersThanTheLimitAreRefused() throws {
        let one = #"{"providerId": "oidc.p%d", "issuer": "i", "audiences": ["a"], "jwksURL": "https://k"}"#
        let list = (0...IdentityProvider.maxProviders).map { String(format: one, $0) }.joined(separator: ",")
        #expect(throws: IdentityProviderError("more than \(IdentityProvider.maxProviders) providers")) { try Self.parse(#"{"providers": [\#(list)]}"#) }
        let atLimit = (0..<IdentityProvider.maxProviders).map { String(format: one, $0) }.joined(separator: ",")
        #expect(try Self.parse(#"{"providers": [\#(atLimit)]}"#).count == IdentityProvider.maxProviders)
    }

    @Test func aKeySetWithMoreKeysThanTheLimitIsRefused() throws {
        let provider = try TestOpenIDProvider()
        let jwk = String(decoding: try JSONSerialization.data(withJSONObject: provider.ec.jwk), as: UTF8.self)
        let atLimit = Array(repeating: jwk, count: ProviderKeySet.maxKeys).joined(separator: ",")
        #expect(ProviderKeySet.keys(jwks: Array(#"{"keys": [\#(atLimit)]}"#.utf8))?.count == 1)
        let over = Array(repeating: jwk, count: ProviderKeySet.maxKeys + 1).joined(separator: ",")
        #expect(ProviderKeySet.keys(jwks: Array(#"{"keys": [\#(over)]}"#.utf8)) == nil)
    }

    @Test func aKeysFileLargerThanTheLimitIsRefused() throws {
        let directory = TemporaryDirectory(prefix: "hearth-idp-big")
        let path = directory.path + "/jwks.json"
        try writeFile(path, #"{"keys": [], "pad": ""# + String(repeating: "x", count: IdentityProviders.maxKeyDocumentBytes) + #""}"#)
        #expect(throws: IdentityProviderError("oidc.test: jwksFile \(path) cannot be read")) {
            try IdentityProviders([IdentityProvider(providerID: "oidc.test", issuers: ["i"], audiences: ["a"], keys: .file(path))], cacheDirectory: nil)
        }
    }
}
