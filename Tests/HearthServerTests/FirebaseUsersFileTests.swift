import HearthAuth
import HearthJSON
import HearthSQLite
import HearthStore
import HearthTesting
import Testing
@testable import HearthServer
@testable import HearthMaintenance
import HearthAccounts

/// `hearth users import|export` below the CLI: the auth:export format, Firebase scrypt
/// hashes checked at sign-in and replaced by Hearth's own.
@Suite struct FirebaseUsersFileTests {
    let dir = TemporaryDirectory()

    /// The public vector of firebase/scrypt (docs/protocol/auth.md §5.2).
    static let signerKey = "jxspr8Ki0RYycVU8zykbdLGjFQ3McFUH0uiiTvC8pVMXAn210wjLNmdZJzxUECKbm0QsEmYUSDzZvpjeJ9WmXA=="
    static let vectorUser = #"""
        {"localId":"vectorUser","email":"User1@Example.com","emailVerified":true,
         "passwordHash":"lSrfV15cpx95/sZS2W9c9Kp6i/LVgQNDNC/qzrCnh1SAyZvqmZqAjTdn3aoItz+VHjoZilo78198JAdRuid5lQ==",
         "salt":"42xEC+ixf3L2lw==","displayName":"User One","photoUrl":"https://example.com/1.png",
         "lastSignedInAt":"1700000001000","createdAt":"1600000000000","disabled":false,
         "customAttributes":"{\"admin\":true}","providerUserInfo":[]}
        """#

    static var exportFile: String {
        #"{"users": ["# + "\n" + vectorUser + ",\n" + #"""
        {"localId":"anon1","createdAt":"1600000000001","providerUserInfo":[]},
        {"localId":"google1","email":"g@example.com","providerUserInfo":[{"providerId":"google.com","rawId":"123"}],"phoneNumber":"+15555550100"},
        {"localId":"off","email":"off@example.com","disabled":true}
        ]}
        """#
    }

    static func scrypt() throws -> FirebaseScrypt {
        try FirebaseScrypt(base64SignerKey: signerKey, base64SaltSeparator: "Bw==", rounds: 8, memCost: 14)
    }

    func importText(_ text: String, into store: SQLiteTreeStore, scrypt: FirebaseScrypt? = nil) throws -> FirebaseUsersFile.ImportSummary {
        var reader = JSONStreamReader(bytes: Array(text.utf8), chunkBytes: 5)
        return try FirebaseUsersFile.importUsers(into: store, reader: &reader, scrypt: scrypt, now: 1_700_000_000_000)
    }

    func service(_ store: SQLiteTreeStore) throws -> AccountService {
        AccountService(accounts: store.accounts, keys: try KeyRing(dataDirectory: dir.path), settings: AuthSettings())
    }

    @Test func importedUsersKeepTheirFieldsAndPasswords() throws {
        let store = try SQLiteTreeStore(directory: dir.path)
        defer { store.close() }
        let summary = try importText(Self.exportFile, into: store, scrypt: Self.scrypt())
        #expect(summary == FirebaseUsersFile.ImportSummary(imported: 4, withPassword: 1, withoutSignIn: 2, droppedProviders: 1))
        // An identity provider's account stays linked; the phone number is dropped.
        let google = try #require(try store.accounts.user(uid: "google1"))
        #expect(google.providerLinks == [ProviderLink(providerID: "google.com", rawID: "123")])
        #expect(google.provider == .federated)
        #expect(try store.accounts.user(providerID: "google.com", rawID: "123")?.uid == "google1")

        let user = try #require(try store.accounts.user(uid: "vectorUser"))
        #expect(user.email == "user1@example.com")
        #expect(user.emailVerified && !user.disabled)
        #expect(user.displayName == "User One" && user.photoURL == "https://example.com/1.png")
        #expect(user.createdAt == 1_600_000_000_000 && user.lastLoginAt == 1_700_000_001_000)
        #expect(user.customClaims == #"{"admin":true}"#)
        #expect(user.provider == .password)
        #expect(user.passwordHash?.hasPrefix(FirebaseScryptHash.prefix) == true)
        #expect(try store.accounts.user(uid: "anon1")?.provider == .anonymous)
        #expect(try store.accounts.user(uid: "off")?.disabled == true)

        // Sign-in checks the Firebase hash, then stores Hearth's own.
        let accounts = try service(store)
        #expect(throws: AuthError.invalidLoginCredentials) { try accounts.signIn(email: "user1@example.com", password: "user1passwore") }
        #expect(try store.accounts.user(uid: "vectorUser")?.passwordHash?.hasPrefix(FirebaseScryptHash.prefix) == true)
        let session = try accounts.signIn(email: "USER1@example.com", password: "user1password")
        #expect(session.user.uid == "vectorUser")
        let rehashed = try #require(try store.accounts.user(uid: "vectorUser")?.passwordHash)
        #expect(rehashed.hasPrefix("$scrypt$"))
        #expect(try PHCString(parsing: rehashed).parameters == ScryptParameters.default)
        #expect(try accounts.signIn(email: "user1@example.com", password: "user1password").user.uid == "vectorUser")
        #expect(throws: AuthError.invalidLoginCredentials) { try accounts.signIn(email: "user1@example.com", password: "nope") }
    }

    /// One bad user, or a taken uid or email, imports nobody.
    @Test func allOrNothing() throws {
        let store = try SQLiteTreeStore(directory: dir.path)
        defer { store.close() }
        _ = try importText(#"{"users":[{"localId":"u1","email":"a@example.com"}]}"#, into: store)
        #expect(throws: AccountImportError.duplicateUID("u1")) {
            try importText(#"{"users":[{"localId":"new1"},{"localId":"u1"}]}"#, into: store)
        }
        #expect(throws: AccountImportError.duplicateEmail(uid: "new2")) {
            try importText(#"{"users":[{"localId":"new1"},{"localId":"new2","email":"A@example.com"}]}"#, into: store)
        }
        #expect(throws: FirebaseUsersFile.FileError.invalidUser(index: 1, uid: "new2", reason: "customAttributes must be a JSON object of at most 1000 bytes")) {
            try importText(#"{"users":[{"localId":"new1"},{"localId":"new2","customAttributes":"[1]"}]}"#, into: store)
        }
        #expect(throws: FirebaseUsersFile.FileError.invalidUser(index: 0, uid: "new1", reason: "customAttributes: custom claim name 'sub' is reserved")) {
            try importText(#"{"users":[{"localId":"new1","customAttributes":"{\"sub\":\"x\"}"}]}"#, into: store)
        }
        #expect(throws: FirebaseUsersFile.FileError.invalidUser(index: 0, uid: "new1", reason: "customAttributes may not set hearth_admin")) {
            try importText(#"{"users":[{"localId":"new1","customAttributes":"{\"hearth_admin\":true}"}]}"#, into: store)
        }
        #expect(throws: FirebaseUsersFile.FileError.invalidUser(index: 0, uid: "hearth-admin", reason: "the uid is reserved for operators' admin tokens")) {
            try importText(#"{"users":[{"localId":"hearth-admin"}]}"#, into: store)
        }
        #expect(throws: FirebaseUsersFile.FileError.missingHashParameters(uid: "new1")) {
            try importText(#"{"users":[{"localId":"new1","passwordHash":"aGFzaA==","salt":"c2FsdA=="}]}"#, into: store)
        }
        #expect(throws: FirebaseUsersFile.FileError.self) { try importText(#"{"users":[{"localId":"new1"},"#, into: store) }
        #expect(throws: FirebaseUsersFile.FileError.notAnExport("no \"users\" array")) { try importText(#"{"other":[1,{"a":2}]}"#, into: store) }
        #expect(try store.accounts.users(after: nil, limit: 10).map(\.uid) == ["u1"])
    }

    /// A user of `maxUserBytes` is read; a larger one is refused, unread.
    @Test func userSizeLimit() throws {
        let store = try SQLiteTreeStore(directory: dir.path)
        defer { store.close() }
        func user(bytes: Int) -> String {
            let skeleton = #"{"localId":"big","displayName":""}"#
            return #"{"localId":"big","displayName":""# + String(repeating: "n", count: bytes - skeleton.utf8.count) + #""}"#
        }
        // The limit counts the bytes after the user's opening brace.
        #expect(throws: FirebaseUsersFile.FileError.invalidUser(index: 0, uid: nil, reason: "more than \(FirebaseUsersFile.maxUserBytes) bytes")) {
            try importText(#"{"users":["# + user(bytes: FirebaseUsersFile.maxUserBytes + 2) + "]}", into: store)
        }
        #expect(try importText(#"{"users":["# + user(bytes: FirebaseUsersFile.maxUserBytes + 1) + "]}", into: store).imported == 1)
    }

    /// uid, email and custom claims at their limits are imported; one byte more is refused.
    @Test func fieldLimits() throws {
        let store = try SQLiteTreeStore(directory: dir.path)
        defer { store.close() }
        let uid = String(repeating: "u", count: FirebaseUsersFile.maxUIDBytes)
        let email = String(repeating: "e", count: FirebaseUsersFile.maxEmailBytes - "@example.com".utf8.count) + "@example.com"
        let claimsPrefix = #"{"k":""#
        let claims = claimsPrefix + String(repeating: "c", count: FirebaseUsersFile.maxCustomAttributesBytes - claimsPrefix.utf8.count - 2) + #""}"#
        func user(_ uid: String, _ email: String, _ claims: String) -> String {
            let escaped = JSONWriter.string(.string(claims))
            return #"{"users":[{"localId":"\#(uid)","email":"\#(email)","customAttributes":\#(escaped)}]}"#
        }
        #expect(throws: FirebaseUsersFile.FileError.self) { try importText(user(uid + "u", email, claims), into: store) }
        #expect(throws: FirebaseUsersFile.FileError.invalidUser(index: 0, uid: uid, reason: "invalid email")) {
            try importText(user(uid, "e" + email, claims), into: store)
        }
        #expect(throws: FirebaseUsersFile.FileError.invalidUser(index: 0, uid: uid, reason: "customAttributes must be a JSON object of at most 1000 bytes")) {
            try importText(user(uid, email, claimsPrefix + "c" + String(claims.dropFirst(claimsPrefix.count))), into: store)
        }
        #expect(try importText(user(uid, email, claims), into: store).imported == 1)
        #expect(try store.accounts.user(uid: uid)?.customClaims?.utf8.count == FirebaseUsersFile.maxCustomAttributesBytes)
    }

    /// Export pages through the users `exportPageSize` at a time.
    @Test func exportPagesThroughEveryUser() throws {
        let store = try SQLiteTreeStore(directory: dir.path)
        defer { store.close() }
        let count = FirebaseUsersFile.exportPageSize + 1
        let users = (0..<count).map { #"{"localId":"u\#($0)"}"# }.joined(separator: ",")
        #expect(try importText(#"{"users":["# + users + "]}", into: store).imported == count)
        var bytes: [UInt8] = []
        #expect(try FirebaseUsersFile.exportUsers(from: store.accounts) { bytes += $0 } == count)
        guard case .object(let top) = try JSONParser.parse(bytes), case .array(let exported)? = top["users"] else {
            Issue.record("not an export")
            return
        }
        #expect(Set(exported.compactMap { $0.objectValue?["localId"]?.stringValue }).count == count)
    }

    /// Export writes the same format; an imported hash goes out until the user signs in.
    @Test func exportRoundTrips() throws {
        let store = try SQLiteTreeStore(directory: dir.path)
        defer { store.close() }
        _ = try importText(Self.exportFile, into: store, scrypt: Self.scrypt())
        func export() throws -> [String: JSONValue] {
            var bytes: [UInt8] = []
            #expect(try FirebaseUsersFile.exportUsers(from: store.accounts) { bytes += $0 } == 4)
            guard case .object(let top) = try JSONParser.parse(bytes), case .array(let users)? = top["users"] else { return [:] }
            return Dictionary(uniqueKeysWithValues: users.map { ($0.objectValue?["localId"]?.stringValue ?? "", $0) })
        }
        let before = try export()
        let vector = try #require(before["vectorUser"]?.objectValue)
        #expect(vector["passwordHash"] == .string("lSrfV15cpx95/sZS2W9c9Kp6i/LVgQNDNC/qzrCnh1SAyZvqmZqAjTdn3aoItz+VHjoZilo78198JAdRuid5lQ=="))
        #expect(vector["salt"] == .string("42xEC+ixf3L2lw=="))
        #expect(vector["createdAt"] == .string("1600000000000") && vector["lastSignedInAt"] == .string("1700000001000"))
        #expect(vector["customAttributes"] == .string(#"{"admin":true}"#))

        // Re-importing the export elsewhere gives the same users.
        let copy = TemporaryDirectory()
        let other = try SQLiteTreeStore(directory: copy.path)
        var text: [UInt8] = []
        _ = try FirebaseUsersFile.exportUsers(from: store.accounts) { text += $0 }
        var reader = JSONStreamReader(bytes: text)
        _ = try FirebaseUsersFile.importUsers(into: other, reader: &reader, scrypt: Self.scrypt(), now: 1_700_000_000_000)
        for uid in ["vectorUser", "anon1", "google1", "off"] {
            var original = try #require(try store.accounts.user(uid: uid))
            var reimported = try #require(try other.accounts.user(uid: uid))
            original.validSince = 0
            reimported.validSince = 0
            #expect(reimported == original)
        }
        other.close()

        _ = try service(store).signIn(email: "user1@example.com", password: "user1password")
        let after = try export()
        #expect(after["vectorUser"]?.objectValue?["passwordHash"] == nil)
    }
}
