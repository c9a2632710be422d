import Foundation
import HearthAuth
import HearthStore
import Synchronization

/// The Ed25519 signing keys (docs/design.md §6), kept by the storage engine
/// (`SigningKeyStore`): files in the embedded engine's data directory, or a table every
/// node of a shared engine shares. Older keys
/// keep verifying, so `hearth keys rotate` does not sign anyone out; a key is deleted only
/// by an operator.
public final class KeyRing: Sendable {
    public let store: any SigningKeyStore
    private struct Keys {
        var signing: SigningKey
        var verifying: [String: VerifyingKey]
    }
    private let keys: Mutex<Keys>

    /// An unknown `kid` makes the ring re-read the store (a rotation by another process or
    /// node) only when a key of that name exists, so forged `kid`s cost one lookup.
    public static func isPlausibleKID(_ kid: String) -> Bool {
        !kid.isEmpty && kid.utf8.count <= 64 && kid.utf8.allSatisfy {
            ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x41 && $0 <= 0x5A) || ($0 >= 0x61 && $0 <= 0x7A) || $0 == 0x2D || $0 == 0x5F
        }
    }

    public enum KeyRingError: Error, CustomStringConvertible {
        case io(String)
        case corrupt(String)
        public var description: String {
            switch self {
            case .io(let what): return "signing keys: \(what)"
            case .corrupt(let what): return "signing keys are damaged: \(what)"
            }
        }
    }

    /// Opens the keys in `store`, creating the first key if there is none.
    public init(store: any SigningKeyStore) throws {
        self.store = store
        if try store.load() == nil {
            _ = try Self.rotate(store: store)
        }
        keys = Mutex(try Self.load(from: store))
    }

    public var signingKey: SigningKey { keys.withLock { $0.signing } }
    public var verifyingKeys: [String: VerifyingKey] { keys.withLock { $0.verifying } }

    /// Re-reads the store if `kid` is unknown here but stored (rotated by `hearth keys
    /// rotate` or on another node). True when `kid` is known afterwards.
    @discardableResult
    public func reload(ifUnknown kid: String) -> Bool {
        if keys.withLock({ $0.verifying[kid] != nil }) { return true }
        guard Self.isPlausibleKID(kid), store.contains(kid: kid), let fresh = try? Self.load(from: store) else { return false }
        keys.withLock { $0 = fresh }
        return fresh.verifying[kid] != nil
    }

    /// Re-reads the store (a shared engine's nodes do it periodically, so a rotation on one
    /// node makes every node sign with the new key). False when the store cannot be read.
    @discardableResult
    public func reload() -> Bool {
        guard let fresh = try? Self.load(from: store) else { return false }
        keys.withLock { $0 = fresh }
        return true
    }

    /// Creates a new key and makes it the signing key; returns its `kid`.
    @discardableResult
    public static func rotate(store: any SigningKeyStore) throws -> String {
        let key = try SigningKey.generate()
        let kid = key.verifyingKey.kid
        try store.add(kid: kid, privateKey: Base64.encode(try key.rawPrivateKey()))
        return kid
    }

    private static func load(from store: any SigningKeyStore) throws -> Keys {
        guard let stored = try store.load() else { throw KeyRingError.corrupt("no current key") }
        var verifying: [String: VerifyingKey] = [:]
        var signing: SigningKey?
        for (name, text) in stored.keys {
            guard let raw = Base64.decode(text) else { throw KeyRingError.corrupt(name) }
            let key = try SigningKey(rawPrivateKey: raw)
            verifying[key.verifyingKey.kid] = key.verifyingKey
            if key.verifyingKey.kid == stored.current { signing = key }
        }
        guard let signing else { throw KeyRingError.corrupt("the current key \(stored.current) is missing") }
        return Keys(signing: signing, verifying: verifying)
    }
}
