import ArgumentParser
import HearthAuth
import HearthMaintenance
import HearthServer
import HearthStore

extension Users {
    /// `hearth users import`: accounts from `firebase auth:export --format=json`.
    struct Import: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Import users from a 'firebase auth:export --format=json' file; they keep their passwords.",
            discussion: """
                The hash parameters are the project's (Firebase console: Authentication, Users, \
                ⋮, Password hash parameters): base64_signer_key, base64_salt_separator, rounds, \
                mem_cost. They are needed when users have passwords. Imported hashes are checked \
                with Firebase's scrypt at sign-in and replaced by Hearth's own on the first \
                successful one. All users are inserted in one transaction: a taken uid or email, \
                or an invalid user, imports nobody. Works while the server runs (its writes wait \
                for the import's transaction).
                """)

        @Argument(help: "The export file ('-' for standard input).") var file: String
        @Option(name: .customLong("hash-key"), help: "base64_signer_key.") var hashKey: String?
        @Option(name: .customLong("salt-separator"), help: "base64_salt_separator.") var saltSeparator: String?
        @Option(help: "rounds (1-8).") var rounds: Int?
        @Option(name: .customLong("mem-cost"), help: "mem_cost (1-14).") var memCost: Int?
        @OptionGroup var data: AccountsDataOption

        func validate() throws {
            let given = [hashKey != nil, saltSeparator != nil, rounds != nil, memCost != nil]
            guard given.allSatisfy({ $0 }) || !given.contains(true) else {
                throw ValidationError("Give all of --hash-key, --salt-separator, --rounds and --mem-cost, or none.")
            }
            _ = try scrypt()
        }

        /// The hash parameters, checked.
        func scrypt() throws -> FirebaseScrypt? {
            guard let hashKey, let saltSeparator, let rounds, let memCost else { return nil }
            do {
                return try FirebaseScrypt(base64SignerKey: hashKey, base64SaltSeparator: saltSeparator, rounds: rounds, memCost: memCost)
            } catch {
                throw Tool.usageError(error)
            }
        }

        func run() throws {
            let scrypt = try scrypt()
            try Tool.run {
                let lock = try data.lock(.writesAccounts)
                defer { lock?.release() }
                let store = try data.openEngine()
                defer { store.close() }
                let input = try InputFile(path: file)
                var reader = input.jsonReader()
                let summary = try FirebaseUsersFile.importUsers(into: store.accountStore, reader: &reader, scrypt: scrypt)
                print("imported \(summary.imported) users: \(summary.withPassword) with a password, "
                      + "\(summary.withoutSignIn) without email and password (they cannot sign in), "
                      + "\(summary.droppedProviders) with providers, phone numbers or second factors that were dropped")
            }
        }
    }

    /// `hearth users export`: accounts in the `firebase auth:export` format.
    struct Export: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Write every user in the 'firebase auth:export --format=json' format.",
            discussion: """
                passwordHash and salt are written only for users who still hold an imported \
                Firebase hash (they have not signed in since the import); Hearth's own hashes \
                are not Firebase scrypt and are left out. With --output the file is replaced \
                only when complete (mode 0600).
                """)

        @Option(help: "Write to this file instead of standard output.") var output: String?
        @OptionGroup var data: AccountsDataOption

        func run() throws {
            try Tool.run {
                let store = try data.openEngine()
                defer { store.close() }
                let out = try OutputFile(path: output)
                let count = try FirebaseUsersFile.exportUsers(from: store.accountStore) { try out.append($0) }
                try out.commit()
                if let output { print("exported \(count) users to \(output)") }
            }
        }
    }
}
