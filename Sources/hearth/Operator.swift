import ArgumentParser
import HearthServer
import HearthStore
#if canImport(Glibc)
import Glibc
#endif

/// Opens a data directory's accounts for one CLI command.
enum Operator {
    static func withAccounts(_ dataDirectory: String, _ body: (AccountService) throws -> Void) throws {
        let store = try SQLiteTreeStore(directory: dataDirectory)
        defer { store.close() }
        let service = AccountService(accounts: store.accounts, keys: try KeyRing(dataDirectory: dataDirectory), settings: AuthSettings())
        do {
            try body(service)
        } catch let error as AuthError {
            print("error: \(error.message)")
            throw ExitCode(1)
        }
    }

    static func setDisabled(_ uid: String, _ disabled: Bool, _ dataDirectory: String) throws {
        try withAccounts(dataDirectory) { service in
            var changes = AccountService.Changes()
            changes.disabled = disabled
            _ = try service.update(uid: uid, changes)
        }
        print("\(disabled ? "disabled" : "enabled") \(uid)")
    }

    /// One line from standard input (so passwords stay out of `ps` and shell history).
    static func readPassword() -> String {
        var line = readLine(strippingNewline: true) ?? ""
        if line.hasSuffix("\r") { line.removeLast() }
        return line
    }
}
