import ArgumentParser
import HearthServer
import HearthStore

/// Opens a data directory's accounts for one CLI command.
enum Operator {
    static func withAccounts(_ dataDirectory: String, _ body: (AccountService) throws -> Void) throws {
        try Tool.run {
            let store = try SQLiteTreeStore(directory: dataDirectory)
            defer { store.close() }
            let service = AccountService(accounts: store.accounts, keys: try KeyRing(dataDirectory: dataDirectory), settings: AuthSettings())
            do {
                try body(service)
            } catch let error as AuthError {
                throw Tool.fail(error.message)
            }
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
}
