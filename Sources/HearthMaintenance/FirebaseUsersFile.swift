import HearthAccounts
import HearthAuth
import HearthJSON
import HearthStore

/// `hearth users import` and `hearth users export`: the JSON format of `firebase
/// auth:export --format=json` (docs/protocol/auth.md §5.1), `{"users": [{...}, ...]}`.
///
/// Import: every user is inserted in one transaction (all or none), read one at a time so
/// the file's size does not matter. Firebase scrypt hashes are stored as
/// `FirebaseScryptHash` strings (with the project's hash parameters), checked at sign-in and
/// replaced by Hearth's own hash on the first successful one. `providerUserInfo` entries of
/// identity providers (`google.com`, `apple.com`, `oidc.…`) become provider links;
/// fields Hearth has no use for (phone entries, `phoneNumber`, `mfaInfo`) are dropped and counted.
///
/// Export: the same format. `passwordHash` and `salt` are written only for users still
/// holding an imported Firebase hash (the parameters are the ones given at import, which
/// the file does not carry); Hearth's own scrypt hashes are not Firebase scrypt, so those
/// users are exported without a hash, like Firebase's export of non-scrypt accounts.
public enum FirebaseUsersFile {
    /// The most bytes of JSON one user may take (bounds memory per user).
    public static let maxUserBytes = 64 * 1024
    /// The longest uid accepted (Firebase's limit).
    public static let maxUIDBytes = 128
    /// Custom claims, as JSON text (docs/protocol/limits.md §6: 1000 bytes), as for tokens.
    public static let maxCustomAttributesBytes = IDTokenClaims.maxCustomClaimsBytes
    /// The longest email accepted.
    public static let maxEmailBytes = 320
    /// Users read from the store per page while exporting.
    public static let exportPageSize = 1000

    public struct ImportSummary: Sendable, Equatable {
        /// Users inserted.
        public var imported = 0
        /// ...of which can sign in with their Firebase password.
        public var withPassword = 0
        /// ...of which have no email and password (federated or phone-only accounts): their
        /// uid and profile are kept, but they cannot sign in to Hearth.
        public var withoutSignIn = 0
        /// Users whose federated providers, phone number or second factors were dropped.
        public var droppedProviders = 0
    }

    public enum FileError: Error, Sendable, Equatable, CustomStringConvertible {
        /// Not JSON, or cut short.
        case json(JSONStreamError)
        /// Not `{"users": [...]}`.
        case notAnExport(String)
        /// The user at `index` (0-based) is invalid; `uid` when it has one.
        case invalidUser(index: Int, uid: String?, reason: String)
        /// Users have Firebase password hashes but no hash parameters were given.
        case missingHashParameters(uid: String)

        public var description: String {
            switch self {
            case .json(let error): return error.description
            case .notAnExport(let what): return "not a firebase auth:export file: \(what)"
            case .invalidUser(let index, let uid, let reason):
                return "user \(index)\(uid.map { " (\($0))" } ?? ""): \(reason)"
            case .missingHashParameters(let uid):
                return "user \(uid) has a password hash: give the project's --hash-key, --salt-separator, --rounds and --mem-cost"
            }
        }
    }

    // MARK: Import

    /// Imports the users `reader` reads into an engine's accounts. `scrypt` holds the
    /// project's hash parameters (needed when any user has a `passwordHash`); `now` is ms
    /// since the epoch.
    public static func importUsers(into accounts: any AccountStore, reader: inout JSONStreamReader, scrypt: FirebaseScrypt?,
                                   now: Int64 = WallClock.milliseconds()) throws -> ImportSummary {
        var summary = ImportSummary()
        var users = UserSequence(scrypt: scrypt, now: now)
        let imported = try accounts.importUsers { try users.next(&reader, summary: &summary) }
        summary.imported = imported
        return summary
    }

    /// Walks `{"users": [ ... ]}`, one user at a time.
    struct UserSequence {
        let scrypt: FirebaseScrypt?
        let now: Int64
        var index = 0
        /// 0: before `{`; 1: in the top object; 2: in the users array; 3: done.
        var stage = 0
        var sawUsers = false

        mutating func next(_ reader: inout JSONStreamReader, summary: inout ImportSummary) throws(FileError) -> UserRecord? {
            while true {
                let event = try read(&reader)
                switch (stage, event) {
                case (0, .objectStart?):
                    stage = 1
                case (0, _):
                    throw .notAnExport("the file is not a JSON object")
                case (1, .key("users")?):
                    guard try read(&reader) == .arrayStart else { throw .notAnExport("\"users\" is not an array") }
                    stage = 2
                    sawUsers = true
                case (1, .key?):
                    guard let value = try read(&reader) else { throw .json(.syntax(.unexpectedEndOfInput(offset: reader.offset))) }
                    do { try reader.skip(startingWith: value) } catch { throw .json(error) }
                case (1, .objectEnd?):
                    guard sawUsers else { throw .notAnExport("no \"users\" array") }
                    stage = 3
                    guard try read(&reader) == nil else { throw .notAnExport("data after the object") }
                    return nil
                case (2, .arrayEnd?):
                    stage = 1
                case (2, .objectStart?):
                    let value: JSONValue
                    do {
                        value = try reader.value(startingWith: .objectStart, maxBytes: FirebaseUsersFile.maxUserBytes)
                    } catch {
                        if case .valueTooLarge = error {
                            throw .invalidUser(index: index, uid: nil, reason: "more than \(FirebaseUsersFile.maxUserBytes) bytes")
                        }
                        throw .json(error)
                    }
                    defer { index += 1 }
                    return try user(value, summary: &summary)
                case (2, _):
                    throw .invalidUser(index: index, uid: nil, reason: "not a JSON object")
                default:
                    throw .notAnExport("unexpected end")
                }
            }
        }

        private func read(_ reader: inout JSONStreamReader) throws(FileError) -> JSONStreamReader.Event? {
            do { return try reader.next() } catch { throw .json(error) }
        }

        /// One exported user as a record.
        func user(_ value: JSONValue, summary: inout ImportSummary) throws(FileError) -> UserRecord {
            guard case .object(let fields) = value else { throw .invalidUser(index: index, uid: nil, reason: "not a JSON object") }
            guard case .string(let uid)? = fields["localId"], !uid.isEmpty, uid.utf8.count <= FirebaseUsersFile.maxUIDBytes,
                  !uid.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) else {
                throw .invalidUser(index: index, uid: nil, reason: "localId must be 1-\(FirebaseUsersFile.maxUIDBytes) bytes without control characters")
            }
            func fail(_ reason: String) -> FileError { .invalidUser(index: index, uid: uid, reason: reason) }
            guard uid != OperatorIdentity.uid else { throw fail("the uid is reserved for operators' admin tokens") }
            func string(_ name: String) throws(FileError) -> String? {
                switch fields[name] {
                case nil, .null?: return nil
                case .string(let text)?: return text
                default: throw fail("\(name) must be a string")
                }
            }
            func bool(_ name: String) throws(FileError) -> Bool {
                switch fields[name] {
                case nil, .null?: return false
                case .bool(let flag)?: return flag
                default: throw fail("\(name) must be true or false")
                }
            }
            /// Milliseconds, written as a string of digits (as the export does) or a number.
            func milliseconds(_ name: String) throws(FileError) -> Int64? {
                switch fields[name] {
                case nil, .null?: return nil
                case .int(let ms)?: return ms
                case .string(let text)?:
                    guard let ms = Int64(text) else { throw fail("\(name) must be milliseconds") }
                    return ms
                default: throw fail("\(name) must be milliseconds")
                }
            }

            var email: String?
            if let raw = try string("email") {
                let lower = raw.lowercased()
                guard lower.utf8.count <= FirebaseUsersFile.maxEmailBytes, lower.contains("@"),
                      !lower.unicodeScalars.contains(where: { $0.value <= 0x20 || $0.value == 0x7F }) else {
                    throw fail("invalid email")
                }
                email = lower
            }
            var passwordHash: String?
            if let hash = try string("passwordHash"), !hash.isEmpty {
                guard let scrypt else { throw .missingHashParameters(uid: uid) }
                do {
                    passwordHash = try FirebaseScryptHash(scrypt: scrypt, base64Salt: try string("salt") ?? "", base64Hash: hash).string
                } catch {
                    throw fail("invalid passwordHash or salt (\(error))")
                }
            }
            var claims: String?
            if let text = try string("customAttributes"), !text.isEmpty {
                guard text.utf8.count <= FirebaseUsersFile.maxCustomAttributesBytes,
                      case .object(let object)? = try? JSONParser.parse(text) else {
                    throw fail("customAttributes must be a JSON object of at most \(FirebaseUsersFile.maxCustomAttributesBytes) bytes")
                }
                // The names ID tokens reserve, and the operator marker, as for claims set over REST.
                if object[OperatorIdentity.claim] != nil { throw fail("customAttributes may not set \(OperatorIdentity.claim)") }
                do {
                    _ = try IDTokenClaims.validateCustomClaims(.object(object))
                } catch {
                    throw fail("customAttributes: \(error)")
                }
                claims = JSONWriter.string(.object(object))
            }
            let created = try milliseconds("createdAt") ?? now
            var record = UserRecord(uid: uid, email: email, passwordHash: passwordHash,
                                    provider: email == nil ? .anonymous : .password, createdAt: created, validSince: now / 1000)
            record.displayName = try string("displayName")
            record.photoURL = try string("photoUrl")
            record.emailVerified = try bool("emailVerified")
            record.disabled = try bool("disabled")
            record.customClaims = claims
            record.lastLoginAt = try milliseconds("lastSignedInAt")
            record.passwordUpdatedAt = passwordHash == nil ? nil : now

            if passwordHash != nil, email != nil { summary.withPassword += 1 }
            var providers = false
            if case .array(let list)? = fields["providerUserInfo"] {
                for entry in list {
                    guard let info = entry.objectValue, let id = info["providerId"]?.stringValue else { throw fail("providerUserInfo entries need a providerId") }
                    if id == "password" { continue }
                    guard id != "phone", let raw = info["rawId"]?.stringValue, !raw.isEmpty else { providers = true; continue }
                    guard !record.providerLinks.contains(where: { $0.providerID == id }) else { throw fail("providerUserInfo lists \(id) twice") }
                    record.providerLinks.append(ProviderLink(providerID: id, rawID: raw, email: info["email"]?.stringValue,
                                                             displayName: info["displayName"]?.stringValue, photoURL: info["photoUrl"]?.stringValue))
                }
            }
            if passwordHash == nil, !record.providerLinks.isEmpty { record.provider = .federated }
            if (email == nil || passwordHash == nil) && record.providerLinks.isEmpty { summary.withoutSignIn += 1 }
            let mfa: Bool
            if case .array(let list)? = fields["mfaInfo"] { mfa = !list.isEmpty } else { mfa = false }
            let phone = try string("phoneNumber")
            if providers || mfa || phone != nil { summary.droppedProviders += 1 }
            return record
        }
    }

    // MARK: Export

    /// Writes every user of `accounts` to `sink`, one user per line. Returns how many.
    public static func exportUsers(from accounts: any AccountStore, sink: ([UInt8]) throws -> Void) throws -> Int {
        try sink(Array("{\"users\": [\n".utf8))
        var after: String?
        var count = 0
        while true {
            let page = try accounts.users(after: after, limit: exportPageSize)
            for user in page {
                var line = count == 0 ? [] : Array(",\n".utf8)
                JSONWriter.write(exported(user), into: &line)
                try sink(line)
                count += 1
            }
            guard page.count == exportPageSize, let last = page.last else { break }
            after = last.uid
        }
        try sink(Array("\n]}\n".utf8))
        return count
    }

    /// One user in the export format.
    static func exported(_ user: UserRecord) -> JSONValue {
        var fields: [JSONKey: JSONValue] = [
            "localId": .string(user.uid),
            "emailVerified": .bool(user.emailVerified),
            "disabled": .bool(user.disabled),
            "createdAt": .string(String(user.createdAt)),
            "providerUserInfo": .array(user.providerLinks.map(AccountService.providerInfo)),
        ]
        if let email = user.email { fields["email"] = .string(email) }
        if let name = user.displayName { fields["displayName"] = .string(name) }
        if let photo = user.photoURL { fields["photoUrl"] = .string(photo) }
        if let last = user.lastLoginAt { fields["lastSignedInAt"] = .string(String(last)) }
        if let claims = user.customClaims { fields["customAttributes"] = .string(claims) }
        if let stored = user.passwordHash, stored.hasPrefix(FirebaseScryptHash.prefix),
           let imported = try? FirebaseScryptHash(parsing: stored) {
            fields["passwordHash"] = .string(Base64.encode(imported.hash))
            fields["salt"] = .string(Base64.encode(imported.salt))
        }
        return .object(fields)
    }
}
