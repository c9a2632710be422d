import ArgumentParser
import HearthAccounts
import HearthAuth
import HearthServer
import HearthStore

/// `hearth admins`: the admin console's administrators. They are not app users:
/// they sign in at `/console/` and nowhere else.
struct Admins: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Manage the admin console's administrators (not app users).",
        subcommands: [List.self, Add.self, Remove.self, SetPassword.self])

    /// How `add` and `set-password` take the password, and the shortest one accepted.
    static let passwordInput = "On a terminal the password is asked for twice, without echo; otherwise it is the first line of "
        + "standard input. It needs at least \(ConsoleAccounts.defaultMinimumPasswordLength) characters."

    /// `writes`: the command changes administrators, so it holds the data directory's lock
    /// for account writers (`DataDirectoryLock`).
    static func withConsole(_ data: AccountsDataOption, writes: Bool = true, _ body: (ConsoleAccounts) throws -> Void) throws {
        try Tool.run {
            let lock = writes ? try data.lock(.writesAccounts) : nil
            defer { lock?.release() }
            let store = try data.openEngine()
            defer { store.close() }
            let accounts = ConsoleAccounts(store: store.consoleRecords, hasher: PasswordHasher(), clock: WallClock.milliseconds)
            do {
                try body(accounts)
            } catch let failure as ConsoleAccounts.Failure {
                throw Tool.fail(failure.description)
            }
        }
    }

    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List the administrators' emails.")
        @OptionGroup var data: AccountsDataOption
        func run() throws {
            try Admins.withConsole(data, writes: false) { accounts in
                for admin in try accounts.list() { print(admin.email) }
            }
        }
    }

    struct Add: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Add an administrator.",
            discussion: Admins.passwordInput)
        @OptionGroup var data: AccountsDataOption
        @Option(help: "The administrator's email address.") var email: String
        func run() throws {
            let password = try PasswordInput.read()
            try Admins.withConsole(data) { try $0.add(email: email, password: password) }
            print("added administrator \(email.lowercased())")
        }
    }

    struct Remove: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Remove an administrator; their console sessions end.")
        @OptionGroup var data: AccountsDataOption
        @Argument(help: "The administrator's email address.") var email: String
        func run() throws {
            try Admins.withConsole(data) { try $0.remove(email: email) }
            print("removed administrator \(email.lowercased())")
        }
    }

    struct SetPassword: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "set-password",
            abstract: "Set an administrator's password; their console sessions end.",
            discussion: Admins.passwordInput)
        @OptionGroup var data: AccountsDataOption
        @Argument(help: "The administrator's email address.") var email: String
        func run() throws {
            let password = try PasswordInput.read()
            try Admins.withConsole(data) { try $0.setPassword(email: email, password: password) }
            print("set the password of \(email.lowercased())")
        }
    }
}
