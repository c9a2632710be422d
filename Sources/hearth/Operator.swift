import ArgumentParser
import HearthAccounts
import HearthServer
import HearthStore

/// Opens a data directory's accounts for one CLI command.
enum Operator {
    /// `writes`: the command changes accounts, so it holds the data directory's lock for
    /// account writers (`DataDirectoryLock`), refused while an import or a restore runs.
    static func withAccounts(_ data: AccountsDataOption, writes: Bool = true, _ body: (AccountService) throws -> Void) throws {
        try Tool.run {
            let lock = writes ? try data.lock(.writesAccounts) : nil
            defer { lock?.release() }
            let store = try data.openEngine()
            defer { store.close() }
            let service = AccountService(accounts: store.accountStore, keys: try KeyRing(store: store.signingKeys), settings: AuthSettings())
            do {
                try body(service)
            } catch let error as AuthError {
                throw Tool.fail(error.message)
            }
        }
    }

    static func setDisabled(_ uid: String, _ disabled: Bool, _ data: AccountsDataOption) throws {
        try withAccounts(data) { service in
            var changes = AccountService.Changes()
            changes.disabled = disabled
            _ = try service.update(uid: uid, changes)
        }
        print("\(disabled ? "disabled" : "enabled") \(uid)")
    }
}
