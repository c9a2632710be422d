import HearthStore

/// How the account core reads a failure of the records below it, so the layers above
/// answer it without knowing the store's errors.
public enum AccountStoreFailure {
    /// The volume or the database is full: nothing was saved, and it may work again once
    /// space is freed.
    public static func isStorageFull(_ error: any Error) -> Bool {
        (error as? StoreError)?.isDiskFull ?? false
    }
}
