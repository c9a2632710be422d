import HearthAuth
import HearthJSON
import HearthSQLite
import HearthStore
@testable import HearthServer
import HearthAccounts
@testable import HearthMaintenance

// The tests' shorthands over a SQLite store, kept here so that HearthServer names no
// engine: each is the engine-neutral call it stands for.

extension AuthContext {
    /// The account machinery over `store`, with signing keys in `<dataDirectory>/keys`.
    static func make(store: SQLiteTreeStore, dataDirectory: String, settings: AuthSettings,
                     hasher: PasswordHasher = PasswordHasher(),
                     clock: @escaping @Sendable () -> Int64 = WallClock.milliseconds) throws -> AuthContext {
        try make(engine: store, keys: FileKeyStore(directory: dataDirectory + "/keys"), settings: settings, hasher: hasher, clock: clock)
    }
}

extension KeyRing {
    /// Opens the keys in `<dataDirectory>/keys`, creating the first key if there is none.
    convenience init(dataDirectory: String) throws {
        try self.init(store: FileKeyStore(directory: dataDirectory + "/keys"))
    }
}

extension FirebaseUsersFile {
    /// Imports the users `reader` reads into `store`'s accounts.
    static func importUsers(into store: SQLiteTreeStore, reader: inout JSONStreamReader, scrypt: FirebaseScrypt?,
                            now: Int64 = WallClock.milliseconds()) throws -> ImportSummary {
        try importUsers(into: store.accounts, reader: &reader, scrypt: scrypt, now: now)
    }
}
