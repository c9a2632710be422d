/// The live sinks of one location, made ready once by their transport for every event that
/// follows until the location's listeners change: the transport sorts them by kind and by
/// the I/O queue each lives on once, instead of for every event (a push to 10,000
/// listeners then costs the hub one call, and each I/O queue a walk of its own
/// connections).
public protocol PreparedBroadcast: Sendable {
    /// Hands one event, in sync with change `seq`, to every sink the broadcast was made of.
    /// Called on the hub's fan-out queue, in commit order; must not block.
    func send(_ event: StreamEvent, seq: Int64)
}

/// Prepares the sinks of one location (all live, all at that location) for repeated events.
public typealias PrepareBroadcast = @Sendable ([any StreamEventSink]) -> any PreparedBroadcast

/// The hub's default preparation: nothing is sorted, and every event is delivered to each
/// sink in turn.
/// (`@usableFromInline`: it is `StreamHub.init`'s default argument.)
@usableFromInline struct SinksBroadcast: PreparedBroadcast {
    let sinks: [any StreamEventSink]

    @usableFromInline init(sinks: [any StreamEventSink]) { self.sinks = sinks }

    @usableFromInline func send(_ event: StreamEvent, seq: Int64) {
        for sink in sinks { sink.deliver(event, seq: seq) }
    }
}

/// The listeners of one location while every one of them is live (started, not a query,
/// not ended) and the trie still holds exactly them: a change there goes to `broadcast`
/// whole, with no per-listener work on the hub's queue. Kept on the fan-out queue.
struct SteadyGroup {
    /// The trie's generation of the location these were made from.
    let generation: UInt64
    let members: [Subscription]
    let broadcast: any PreparedBroadcast
    /// The earliest `expiresAt` among the members: from then on the group is not used,
    /// and the per-listener path ends whoever expired.
    let expiresAt: Int64
    /// Changes up to this seq reached the members (or are older than what they started
    /// with); the group delivers only newer ones, and records the last it delivered.
    var deliveredThrough: Int64

    /// Makes the group when every subscriber is live, none has change `seq` yet and none
    /// expired by `now`; else nil (the transport prepares nothing then).
    static func make(_ match: SubscriptionTrie.Match, for seq: Int64, now: Int64, prepare: PrepareBroadcast) -> SteadyGroup? {
        var sinks: [any StreamEventSink] = []
        sinks.reserveCapacity(match.subscribers.count)
        var expiresAt = Int64.max
        var through = Int64.min
        for subscription in match.subscribers {
            guard !subscription.ended, subscription.refresh == nil, subscription.pending == nil,
                  let sink = subscription.eventSink else { return nil }
            sinks.append(sink)
            if let expiry = subscription.gate.expiresAt { expiresAt = min(expiresAt, expiry) }
            through = max(through, subscription.deliveredThrough)
        }
        if sinks.isEmpty || seq <= through || now >= expiresAt { return nil }
        return SteadyGroup(generation: match.generation, members: match.subscribers, broadcast: prepare(sinks),
                           expiresAt: expiresAt, deliveredThrough: through)
    }

    /// The group is given up: each member is in sync with what the group delivered.
    func release() {
        for member in members where member.deliveredThrough < deliveredThrough {
            member.deliveredThrough = deliveredThrough
        }
    }
}
