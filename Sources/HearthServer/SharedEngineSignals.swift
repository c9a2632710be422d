import HearthStreams
import Logging

/// What this node does when a shared engine signals (`EngineHooks.onFeedGap`,
/// `onLeaseLost`; docs/architecture.md, "The storage contract"): streams that missed
/// changes start over; wire-protocol connections whose onDisconnect operations another node
/// may run are closed without running them. An engine with one node never signals.
struct SharedEngineSignals: Sendable {
    let logger: Logger
    let hub: StreamHub
    let wireSessions: WireSessionRegistry

    /// Changes `first...last` left the change log before this node delivered them.
    func feedGap(first: Int64, last: Int64) {
        logger.error("this node missed changes \(first)...\(last): they left the change log before it read them (it fell more than the log's window behind). Every stream on this node is closed; clients reconnect and start over")
        hub.endAll(.reconnect)
    }

    /// This node could not renew its lease in time.
    func leaseLost() {
        let sessions = wireSessions.all()
        let text = "this node could not renew its database lease in time: it takes a new one when the database answers"
        if sessions.isEmpty {
            logger.info("\(text) (no wire-protocol connection was open)")
        } else {
            logger.warning("\(text); another node may run its connections' onDisconnect operations, so its \(sessions.count) wire-protocol connection(s) are closed without running them")
        }
        for session in sessions { session.endForLostLease() }
    }

    /// After a lost lease, this node holds one again: it takes writes again.
    func leaseRegained() {
        logger.info("this node holds a database lease again: it takes writes and onDisconnect operations again")
    }
}
