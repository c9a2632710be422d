import HearthSystem
import HearthAuth
import HearthHTTPClient
import HearthJSON

/// One identity provider the operator configured (docs/api.md, "Identity
/// providers"): whose ID tokens `accounts:signInWithIdp` accepts, checked against which
/// issuer, audiences and keys.
public struct IdentityProvider: Sendable, Equatable {
    /// Where the provider's public keys come from.
    public enum KeySource: Sendable, Equatable {
        /// Fetched (and refreshed, and cached on disk) from an `https://` URL, or `http://`
        /// on a loopback host.
        case url(String)
        /// Read once from a file (an air-gapped server).
        case file(String)
    }

    /// How the key document is written.
    public enum KeyFormat: Sendable, Equatable {
        /// A JWK Set (RFC 7517): Google's and Apple's `certs`/`keys`, any OIDC issuer's.
        case jwks
        /// `{"<kid>": "<PEM certificate>", …}`: Google's certificates of Firebase project keys.
        case x509
    }

    /// `google.com`, `apple.com`, `oidc.<name>`, or `firebase` (a Firebase project's users).
    public var providerID: String
    /// The accepted `iss` values (Google writes two forms).
    public var issuers: [String]
    /// The accepted `aud` values: OAuth client ids, an app's bundle id (Apple), a project id.
    public var audiences: [String]
    public var keys: KeySource
    public var format: KeyFormat
    /// For `firebase`: the Firebase project whose ID tokens are accepted.
    public var projectID: String?
    /// The address domains for which this provider's `email_verified: true` proves the
    /// address to Hearth (`trustedEmailDomains`; `*`: every domain): such a sign-in takes
    /// over an account whose address was never verified (docs/api.md, "Who owns an email
    /// address"). Google by default for its own addresses, as Firebase; others none.
    public var trustedEmailDomains: [String]

    public static let google = "google.com"
    public static let apple = "apple.com"
    public static let firebase = "firebase"
    public static let oidcPrefix = "oidc."
    public static let googleIssuers = ["https://accounts.google.com", "accounts.google.com"]
    public static let googleKeysURL = "https://www.googleapis.com/oauth2/v3/certs"
    public static let appleIssuer = "https://appleid.apple.com"
    public static let appleKeysURL = "https://appleid.apple.com/auth/keys"
    /// Google's certificates for Firebase project ID tokens (docs/protocol/auth.md §4.3).
    public static let firebaseKeysURL = "https://www.googleapis.com/robot/v1/metadata/x509/securetoken@system.gserviceaccount.com"
    /// The largest providers file read.
    public static let maxFileBytes = 64 * 1024
    /// The most providers one file may list.
    public static let maxProviders = 32
    /// The most entries of one provider's `trustedEmailDomains`.
    public static let maxTrustedEmailDomains = 64
    /// Google is the authority of these addresses (Firebase trusts it for them only).
    public static let googleEmailDomains = ["gmail.com", "googlemail.com"]
    /// In `trustedEmailDomains`: every domain.
    public static let anyDomain = "*"

    public init(providerID: String, issuers: [String], audiences: [String], keys: KeySource, format: KeyFormat = .jwks, projectID: String? = nil,
                trustedEmailDomains: [String]? = nil) {
        (self.providerID, self.issuers, self.audiences, self.keys, self.format, self.projectID) = (providerID, issuers, audiences, keys, format, projectID)
        self.trustedEmailDomains = (trustedEmailDomains ?? (providerID == Self.google ? Self.googleEmailDomains : [])).map { $0.lowercased() }
    }

    /// Whether this provider's `email_verified: true` for `email` (normalized, lower case)
    /// proves the address: its domain is one of `trustedEmailDomains`.
    public func trusts(email: String) -> Bool {
        guard let at = email.lastIndex(of: "@") else { return false }
        let domain = email[email.index(after: at)...]
        return trustedEmailDomains.contains { $0 == Self.anyDomain || $0 == domain }
    }

    /// The providers of a providers file's text:
    /// `{"providers": [{"providerId", "issuer", "audiences", "jwksURL" | "jwksFile", "projectId"}]}`.
    public static func parse(_ bytes: [UInt8]) throws(IdentityProviderError) -> [IdentityProvider] {
        guard bytes.count <= maxFileBytes else { throw IdentityProviderError("the file is larger than \(maxFileBytes) bytes") }
        guard case .object(let root)? = try? JSONParser.parse(bytes) else { throw IdentityProviderError("not a JSON object") }
        guard case .array(let entries)? = root["providers"] else { throw IdentityProviderError("no \"providers\" array") }
        guard entries.count <= maxProviders else { throw IdentityProviderError("more than \(maxProviders) providers") }
        var seen = Set<String>()
        var providers: [IdentityProvider] = []
        for (index, entry) in entries.enumerated() {
            let provider: IdentityProvider
            do {
                provider = try parse(entry)
            } catch {
                throw IdentityProviderError("providers[\(index)]: \(error.description)")
            }
            guard seen.insert(provider.providerID).inserted else {
                throw IdentityProviderError("providers[\(index)]: \(provider.providerID) is listed twice")
            }
            providers.append(provider)
        }
        return providers
    }

    static func parse(_ entry: JSONValue) throws(IdentityProviderError) -> IdentityProvider {
        guard let fields = entry.objectValue else { throw IdentityProviderError("not an object") }
        let known: Set<String> = ["providerId", "issuer", "audiences", "jwksURL", "jwksFile", "projectId", "trustedEmailDomains"]
        if let unknown = fields.keys.strings.sorted().first(where: { !known.contains($0) }) {
            throw IdentityProviderError("unknown field \"\(unknown)\"")
        }
        func string(_ name: String) throws(IdentityProviderError) -> String? {
            guard let value = fields[JSONKey(name)] else { return nil }
            guard let text = value.stringValue, !text.isEmpty else { throw IdentityProviderError("\(name) must be a non-empty string") }
            return text
        }
        guard let id = try string("providerId") else { throw IdentityProviderError("providerId is missing") }
        var issuers = try string("issuer").map { [$0] }
        var audiences: [String]?
        if let value = fields["audiences"] {
            guard case .array(let list) = value, !list.isEmpty,
                  list.allSatisfy({ ($0.stringValue ?? "").isEmpty == false }) else {
                throw IdentityProviderError("audiences must be a non-empty array of strings")
            }
            audiences = list.compactMap(\.stringValue)
        }
        var trusted: [String]?
        if let value = fields["trustedEmailDomains"] {
            guard case .array(let list) = value, list.allSatisfy({ ($0.stringValue ?? "").isEmpty == false }) else {
                throw IdentityProviderError("trustedEmailDomains must be an array of domains (or \"*\")")
            }
            guard list.count <= maxTrustedEmailDomains else {
                throw IdentityProviderError("trustedEmailDomains lists more than \(maxTrustedEmailDomains) domains")
            }
            trusted = list.compactMap(\.stringValue)
        }
        var defaultKeys: String?
        var format = KeyFormat.jwks
        let projectID = try string("projectId")
        switch id {
        case google:
            issuers = issuers ?? googleIssuers
            defaultKeys = googleKeysURL
        case apple:
            issuers = issuers ?? [appleIssuer]
            defaultKeys = appleKeysURL
        case firebase:
            guard let projectID else { throw IdentityProviderError("firebase needs projectId") }
            issuers = issuers ?? [IDTokenClaims.issuerPrefix + projectID]
            audiences = audiences ?? [projectID]
            defaultKeys = firebaseKeysURL
            format = .x509
        default:
            guard id.hasPrefix(oidcPrefix), id.count > oidcPrefix.count,
                  id.utf8.allSatisfy({ $0 == UInt8(ascii: ".") || $0 == UInt8(ascii: "-") || $0 == UInt8(ascii: "_")
                                       || (0x30...0x39).contains($0) || (0x61...0x7A).contains($0) }) else {
                throw IdentityProviderError("providerId must be google.com, apple.com, firebase or oidc.<name> (lower-case letters, digits, . - _)")
            }
            guard issuers != nil else { throw IdentityProviderError("\(id) needs issuer") }
        }
        if id != firebase, projectID != nil { throw IdentityProviderError("projectId is only for firebase") }
        if id == firebase, trusted != nil { throw IdentityProviderError("trustedEmailDomains is not for firebase (no sign-in)") }
        guard let audiences else { throw IdentityProviderError("audiences is missing") }
        let url = try string("jwksURL"), file = try string("jwksFile")
        let keys: KeySource
        switch (url, file) {
        case (let url?, nil):
            guard let error = KeySourceURL.problem(url) else { keys = .url(url); break }
            throw IdentityProviderError("jwksURL \(error)")
        case (nil, let file?): keys = .file(file)
        case (nil, nil):
            guard let defaultKeys else { throw IdentityProviderError("\(id) needs jwksURL or jwksFile") }
            keys = .url(defaultKeys)
        default: throw IdentityProviderError("give jwksURL or jwksFile, not both")
        }
        return IdentityProvider(providerID: id, issuers: issuers ?? [], audiences: audiences, keys: keys, format: format, projectID: projectID,
                                trustedEmailDomains: trusted)
    }
}

/// Which key URLs are allowed: `https://`, or `http://` to a loopback host only (keys over
/// cleartext could be swapped by anyone on the path). The URL is parsed as the client that
/// fetches it parses it (`HTTPURL`: no user information), and its host is judged whole,
/// not by a text prefix: `http://127.0.0.1.nip.io/` is a name that resolves anywhere.
enum KeySourceURL {
    static func problem(_ url: String) -> String? {
        let parsed: HTTPURL
        do {
            parsed = try HTTPURL(url)
        } catch {
            return "must be an https:// URL (\(error.description))"
        }
        if parsed.isTLS || isLoopback(host: parsed.host) { return nil }
        return "may use http:// only for a loopback host (127.0.0.0/8, ::1, localhost); use https://"
    }

    /// A loopback host, judged whole (`LoopbackHost`).
    static func isLoopback(host: String) -> Bool {
        LoopbackHost.contains(host)
    }
}

/// Why a providers file cannot be used (the server does not start).
public struct IdentityProviderError: Error, Sendable, Equatable, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}
