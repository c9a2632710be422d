import HearthTriggers
import Synchronization

/// One database of the server (docs/namespaces.md): the adapters over one
/// `DatabaseInstance` (its store, rules, streams and listens, onDisconnect ledger) — the
/// REST context with its wire protocol, the rules file's settings, and the triggers
/// delivering its events, registered with the instance as a commit observer. Accounts are
/// the server's, shared by all. The default namespace (named "") is one of them.
final class Namespace: Sendable {
    /// Empty for the default namespace.
    let name: String
    let instance: DatabaseInstance
    let rulesSettings: RulesSettings
    /// The REST adapter over this namespace's core (its wire protocol in `context.wire`).
    let context: RESTContext
    /// Its triggers (the triggers file's, over its own outbox), when a triggers file is set.
    let triggers: TriggerDelivery?
    private let started = Mutex(false)

    init(name: String, instance: DatabaseInstance, rulesSettings: RulesSettings, context: RESTContext,
         triggers: TriggerDelivery? = nil) {
        self.name = name
        self.instance = instance
        self.rulesSettings = rulesSettings
        self.context = context
        self.triggers = triggers
        if let triggers { instance.addCommitObserver(triggers) }
    }

    var store: DatabaseInstance.Store { instance.store }
    var listens: ListenAccess { instance.listens }
    var ledger: OnDisconnectLedger { instance.ledger }
    /// How it is named in the log.
    var shownName: String { name.isEmpty ? "the default namespace" : "namespace \(name)" }
    /// Appended to a log line about it: nothing for the default namespace.
    var inLog: String { name.isEmpty ? "" : " (namespace \(name))" }

    /// Starts its housekeeping and its triggers' deliverers (`databaseHost`: the server's
    /// `host:port` the events name). Once: a second call does nothing.
    func start(_ housekeeping: DatabaseInstance.Housekeeping, databaseHost: String) {
        guard started.withLock({ started in defer { started = true }; return !started }) else { return }
        instance.startHousekeeping(housekeeping)
        triggers?.start(databaseHost: databaseHost)
    }

    /// Stops its triggers, then its housekeeping and listens, and closes its store.
    func close() {
        triggers?.close()
        instance.close()
    }
}
