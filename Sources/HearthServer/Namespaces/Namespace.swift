import Dispatch
import Logging
import HearthStore
import HearthTriggers
import Synchronization

/// One database of the server (issue 28, DESIGN.md §12): its store (tree, change feed and
/// event ids, query indexes, onDisconnect records), its rules, its streams and listens,
/// and the REST and wire adapters over its core. Accounts are the server's, shared by all.
final class Namespace: Sendable {
    /// Empty for the default namespace.
    let name: String
    let store: any StorageEngine
    let listens: ListenAccess
    let rulesSettings: RulesSettings
    let ledger: OnDisconnectLedger
    /// The REST adapter over this namespace's core (its wire protocol in `context.wire`).
    let context: RESTContext
    /// Its triggers (the triggers file's, over its own outbox), when a triggers file is set;
    /// the default namespace's are the service's own.
    let triggers: TriggerDelivery?
    /// Its housekeeping (change-log trims, orphaned onDisconnect operations); the default
    /// namespace's are the service's own.
    private let timers = Mutex<[DispatchSourceTimer]>([])

    init(name: String, store: any StorageEngine, listens: ListenAccess, rulesSettings: RulesSettings,
         ledger: OnDisconnectLedger, context: RESTContext, triggers: TriggerDelivery? = nil) {
        self.triggers = triggers
        self.name = name
        self.store = store
        self.listens = listens
        self.rulesSettings = rulesSettings
        self.ledger = ledger
        self.context = context
    }

    /// Starts its stream sweeps and timers (`HearthService.housekeeping`).
    func startHousekeeping(configuration: HearthConfiguration, auth: AuthContext, logger: Logger) {
        let (store, listens, ledger) = (self.store, self.listens, self.ledger)
        timers.withLock { timers in
            timers = HearthService.housekeeping(store: store, listens: listens, ledger: ledger, configuration: configuration,
                                                auth: auth, logger: logger)
        }
    }

    /// Stops its housekeeping and listens, then closes its store.
    func close() {
        timers.withLock { timers in
            for timer in timers { timer.cancel() }
            timers = []
        }
        listens.stop()
        triggers?.close()
        store.close()
    }
}
