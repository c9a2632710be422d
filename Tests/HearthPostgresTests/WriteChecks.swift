import HearthStore

/// Checks the PostgreSQL tests give their writes.
enum WriteChecks {
    /// Reads the tree (whether anything is stored at the root) and allows the write: a batch
    /// with such a write is judged inside its transaction, never sent whole.
    static let readsTheTree: WriteCheck = { view, _ in _ = try view.exists(at: .root) }
}
