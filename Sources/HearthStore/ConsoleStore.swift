/// The admin console's records as every engine keeps them: administrators,
/// sessions, saved rules versions, and the failures `ConsoleRecords` throws.
public enum ConsoleStore {
    public struct Admin: Sendable, Equatable {
        public var email: String
        public var passwordHash: String
        public var createdAt: Int64
        public var passwordAt: Int64
        public init(email: String, passwordHash: String, createdAt: Int64, passwordAt: Int64) {
            (self.email, self.passwordHash, self.createdAt, self.passwordAt) = (email, passwordHash, createdAt, passwordAt)
        }
    }

    public struct SessionRecord: Sendable, Equatable {
        public var hash: String
        public var email: String
        public var csrf: String
        public var createdAt: Int64
        public var seenAt: Int64
        public init(hash: String, email: String, csrf: String, createdAt: Int64, seenAt: Int64) {
            (self.hash, self.email, self.csrf, self.createdAt, self.seenAt) = (hash, email, csrf, createdAt, seenAt)
        }
    }

    public enum Failure: Error, Sendable, Equatable {
        case exists
        case notFound
    }

}

extension ConsoleStore {
    public struct RulesVersion: Sendable, Equatable {
        public var id: Int64
        public var savedAt: Int64
        public var savedBy: String
        public var text: String
        public init(id: Int64, savedAt: Int64, savedBy: String, text: String) {
            (self.id, self.savedAt, self.savedBy, self.text) = (id, savedAt, savedBy, text)
        }
    }
}
