import Dispatch
import HearthJSON
import Synchronization
#if canImport(Glibc)
import Glibc
#endif
import HearthStore
import HearthSystem

extension SQLiteTreeStore: StorageEngine {
    public var engineName: String { "sqlite" }
    /// One process owns the file (docs/design.md §4).
    public var isShared: Bool { false }
    public var accountStore: any AccountStore { accounts }
    public var consoleRecords: any ConsoleRecords { console }
    public var onDisconnectRecords: any OnDisconnectRecords { SQLiteOnDisconnectStore(store: self) }
    public var triggerOutbox: any TriggerOutbox { SQLiteTriggerOutbox(store: self) }
    public var signingKeys: any SigningKeyStore { FileKeyStore(directory: directory + "/keys") }
    /// One process: its own memory counts every attempt.
    public var limitCounters: (any LimitCounters)? { nil }

    /// The database file with its write-ahead log.
    public func storageBytes() -> Int64? {
        [databasePath, databasePath + "-wal"].reduce(Int64(0)) { total, path in
            total + Int64((try? Syscall.status(path))?.st_size ?? 0)
        }
    }
}
