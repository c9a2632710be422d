import Foundation
import HearthAuth
import HearthStore
import Synchronization

/// The Ed25519 signing keys, kept with the data (DESIGN.md §6): `<data>/keys/<kid>.key`
/// holds the base64 raw private key (mode 0600, folder 0700) and `<data>/keys/current`
/// names the key that signs. Older keys keep verifying, so `hearth keys rotate` does not
/// sign anyone out; a key is deleted only by an operator.
public final class KeyRing: Sendable {
    public let directory: String
    private struct Keys {
        var signing: SigningKey
        var verifying: [String: VerifyingKey]
    }
    private let keys: Mutex<Keys>

    /// An unknown `kid` makes the ring re-read the folder (a rotation by another process)
    /// only when a key file of that name exists, so forged `kid`s cost one `stat`.
    static func isPlausibleKID(_ kid: String) -> Bool {
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

    /// Opens the keys in `<dataDirectory>/keys`, creating the first key if there is none.
    public init(dataDirectory: String) throws {
        directory = dataDirectory + "/keys"
        if try Self.currentKID(in: directory) == nil {
            _ = try Self.rotate(in: directory)
        }
        keys = Mutex(try Self.load(from: directory))
    }

    public var signingKey: SigningKey { keys.withLock { $0.signing } }
    public var verifyingKeys: [String: VerifyingKey] { keys.withLock { $0.verifying } }

    /// Re-reads the folder if `kid` is unknown here but its key file exists (rotated by
    /// `hearth keys rotate` in another process). True when `kid` is known afterwards.
    @discardableResult
    public func reload(ifUnknown kid: String) -> Bool {
        if keys.withLock({ $0.verifying[kid] != nil }) { return true }
        guard Self.isPlausibleKID(kid), FileManager.default.fileExists(atPath: "\(directory)/\(kid).key"),
              let fresh = try? Self.load(from: directory) else { return false }
        keys.withLock { $0 = fresh }
        return fresh.verifying[kid] != nil
    }

    /// Creates a new key and makes it the signing key; returns its `kid`.
    @discardableResult
    public static func rotate(dataDirectory: String) throws -> String {
        try rotate(in: dataDirectory + "/keys")
    }

    /// Files are created 0600 from the start and folders 0700 (`DatabaseFile`'s modes,
    /// through `OutputFile`: written under a temporary name, flushed, renamed), whatever
    /// the umask; the key is in place before `current` names it.
    private static func rotate(in directory: String) throws -> String {
        try DatabaseFile.makeDirectory(directory)
        let key = try SigningKey.generate()
        let kid = key.verifyingKey.kid
        try write(Array(Base64.encode(try key.rawPrivateKey()).utf8), to: "\(directory)/\(kid).key")
        try write(Array(kid.utf8), to: "\(directory)/current")
        return kid
    }

    private static func write(_ bytes: [UInt8], to path: String) throws {
        let output = try OutputFile(path: path)
        try output.append(bytes)
        try output.commit()
    }

    private static func currentKID(in directory: String) throws -> String? {
        guard let data = FileManager.default.contents(atPath: directory + "/current") else { return nil }
        return String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    private static func load(from directory: String) throws -> Keys {
        guard let current = try currentKID(in: directory) else { throw KeyRingError.corrupt("no current key") }
        var verifying: [String: VerifyingKey] = [:]
        var signing: SigningKey?
        for name in try FileManager.default.contentsOfDirectory(atPath: directory) where name.hasSuffix(".key") {
            guard let data = FileManager.default.contents(atPath: "\(directory)/\(name)"),
                  let raw = Base64.decode(String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)) else {
                throw KeyRingError.corrupt(name)
            }
            let key = try SigningKey(rawPrivateKey: raw)
            verifying[key.verifyingKey.kid] = key.verifyingKey
            if key.verifyingKey.kid == current { signing = key }
        }
        guard let signing else { throw KeyRingError.corrupt("the current key \(current) is missing") }
        return Keys(signing: signing, verifying: verifying)
    }
}
