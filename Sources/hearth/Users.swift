import ArgumentParser
import HearthAccounts
import HearthServer

/// `hearth users …`: manage accounts in a data directory, also while the server runs
/// (SQLite's WAL lets both work on the file; the server sees changes within
/// `AuthSettings.userStatusCacheSeconds`).
struct Users: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "List, add, disable, enable, delete users, set passwords, sign users out (revoke).",
        subcommands: [List.self, Add.self, Disable.self, Enable.self, Delete.self, SetPassword.self, Revoke.self, ResetLink.self,
                      Import.self, Export.self])

    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Print every user: uid, email, provider, enabled or disabled (tab-separated).")
        @OptionGroup var data: AccountsDataOption
        @Option(help: "At most this many users.") var limit = 1000
        func run() throws {
            try Operator.withAccounts(data, writes: false) { service in
                for user in try service.accounts.users(after: nil, limit: limit) {
                    print([user.uid, user.email ?? "-", user.provider.rawValue, user.disabled ? "disabled" : "enabled"].joined(separator: "\t"))
                }
            }
        }
    }

    struct Add: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Create an email/password user; prints the uid.",
            discussion: "On a terminal the password is asked for twice, without echo; otherwise it is the first line of standard input.")
        @OptionGroup var data: AccountsDataOption
        @Option(help: "The new user's email address.") var email: String
        func run() throws {
            let password = try PasswordInput.read()
            try Operator.withAccounts(data) { service in
                print(try service.signUp(email: email, password: password).user.uid)
            }
        }
    }

    struct Disable: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Disable a user and revoke their tokens.")
        @OptionGroup var data: AccountsDataOption
        @Argument(help: "The user's uid.") var uid: String
        func run() throws { try Operator.setDisabled(uid, true, data) }
    }

    struct Enable: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Enable a disabled user again.")
        @OptionGroup var data: AccountsDataOption
        @Argument(help: "The user's uid.") var uid: String
        func run() throws { try Operator.setDisabled(uid, false, data) }
    }

    struct Delete: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Delete a user and their refresh tokens (their data stays in the tree).")
        @OptionGroup var data: AccountsDataOption
        @Argument(help: "The user's uid.") var uid: String
        func run() throws {
            try Operator.withAccounts(data) { try $0.delete(uid: uid) }
            print("deleted \(uid)")
        }
    }

    struct Revoke: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Sign a user out everywhere: refresh tokens revoked, earlier ID tokens refused.")
        @OptionGroup var data: AccountsDataOption
        @Argument(help: "The user's uid.") var uid: String
        func run() throws {
            try Operator.withAccounts(data) { try $0.revokeSessions(uid: uid) }
            print("revoked every session of \(uid)")
        }
    }

    struct ResetLink: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "reset-link",
            abstract: "Print a password-reset link for an account (what the mail would carry), for servers that send no mail.",
            discussion: "The link works once, for \(AccountService.ActionKind.passwordReset.lifetimeSeconds) s. Give it to the account's owner only.")
        @OptionGroup var data: AccountsDataOption
        @Option(help: "The account's email address.") var email: String
        @Option(help: "The page links point to (default: HEARTH_ACTION_LINK_BASE).") var linkBase: String?
        func run() throws {
            let base = linkBase ?? Environment()["HEARTH_ACTION_LINK_BASE"]
            try Operator.withAccounts(data) { service in
                guard let user = try service.accounts.user(email: email.lowercased()) else { throw Tool.fail("no user with email \(email)") }
                let code = try service.createActionCode(.passwordReset, for: user)
                if let base {
                    print(EmailActionMail(linkBase: base, appName: "").link(.passwordReset, code: code))
                } else {
                    print("oobCode=\(code)  (no --link-base or HEARTH_ACTION_LINK_BASE: give this code to the app's reset page)")
                }
            }
        }
    }

    struct SetPassword: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "set-password",
            abstract: "Set a user's password; revokes their earlier tokens.",
            discussion: "On a terminal the password is asked for twice, without echo; otherwise it is the first line of standard input.")
        @OptionGroup var data: AccountsDataOption
        @Argument(help: "The user's uid.") var uid: String
        func run() throws {
            let password = try PasswordInput.read()
            try Operator.withAccounts(data) { service in
                var changes = AccountService.Changes()
                changes.password = password
                _ = try service.update(uid: uid, changes)
            }
            print("password set for \(uid)")
        }
    }
}
