import HearthJSON

/// Query streams (on the fan-out queue): a change does not reach the client as written; the
/// hub re-reads what it changed in the query's window and sends that.
///
/// A query with a limit can shift its whole window with any child, so its result is
/// re-read whole and sent as `put /` when its digest changed. A query without a limit
/// decides each child alone (its bounds look at that child only), so a change below the
/// location re-reads just the children it touched and sends their new state: the child's
/// value if it is in the window, `null` if it may have been and is not. Its result can be
/// the whole location (a stream of `orderBy="$key"&startAt=…` over 64,000 children is
/// 7 MB), which a whole re-read would read, digest and send again for every change.
extension StreamHub {
    /// Records what `event` (a change's event at the stream's location, seq `seq`) asks
    /// the next re-read of `subscription` for.
    func owe(_ subscription: Subscription, _ event: StreamEvent, seq: Int64) {
        if subscription.rereadChildren != nil, subscription.owedWhole == nil, let keys = Self.touchedChildren(event) {
            for key in keys { subscription.owedChildren[key] = seq }
            if subscription.owedChildren.count <= options.maxQueryChildrenReread { return }
        }
        // A change at or above the location, a query with a limit, or more children than
        // a re-read of children takes: the whole result.
        subscription.owedWhole = max(subscription.owedWhole ?? seq, seq)
        subscription.owedChildren = [:]
    }

    /// Drops what a result in sync with change `seq` already covers (the first result, or
    /// a whole re-read): the changes up to `seq`.
    func forgetOwed(_ subscription: Subscription, through seq: Int64) {
        if let whole = subscription.owedWhole, whole <= seq { subscription.owedWhole = nil }
        if !subscription.owedChildren.isEmpty {
            subscription.owedChildren = subscription.owedChildren.filter { $0.value > seq }
        }
    }

    /// The children of the location `event` touches, each once; nil when it touches the
    /// location itself (a `put /`).
    static func touchedChildren(_ event: StreamEvent) -> [JSONKey]? {
        if event.path != "/" {
            let first = event.path.utf8.dropFirst().split(separator: UInt8(ascii: "/"), maxSplits: 1).first
            return first.map { [JSONKey(String(decoding: $0, as: UTF8.self))] }
        }
        guard event.name == .patch, case .object(let entries) = event.data else { return nil }
        var keys = Set<JSONKey>()
        for entry in entries.keys {
            guard let first = entry.string.utf8.split(separator: UInt8(ascii: "/"), maxSplits: 1).first else { return nil }
            keys.insert(JSONKey(String(decoding: first, as: UTF8.self)))
        }
        return Array(keys)
    }

    /// Runs the re-read `subscription` owes: of its children when only children are owed,
    /// else of its whole result. One runs at a time; what changes ask for meanwhile runs
    /// next. The sink encodes what the read found where the read completes, on the reader.
    func refresh(_ subscription: Subscription) {
        guard let refresh = subscription.refresh, !subscription.ended, subscription.owesRefresh else { return }
        if subscription.owedWhole == nil, let rereadChildren = subscription.rereadChildren {
            return refreshChildren(subscription, rereadChildren)
        }
        subscription.refreshing = true
        subscription.owedWhole = nil
        subscription.owedChildren = [:]
        // Only a refresh changes these once the stream is live, and one runs at a time.
        let (sink, lastTag) = (subscription.eventSink, subscription.lastResultTag)
        refresh { result in
            let prepared: PreparedEvents? = if let result, let sink, result.tag != lastTag {
                sink.prepareEvents([(StreamEvent(name: .put, path: "/", data: result.value), result.seq)])
            } else {
                nil
            }
            self.fanout.async {
                subscription.refreshing = false
                guard !subscription.ended else { return }
                if let result, result.seq > subscription.deliveredThrough {
                    if let expiry = subscription.gate.expiresAt, expiry <= self.clock() {
                        return self.end(subscription, .authRevoked)
                    }
                    subscription.deliveredThrough = result.seq
                    subscription.windowKeys = result.childKeyHashes
                    self.forgetOwed(subscription, through: result.seq)
                    if result.tag != subscription.lastResultTag, let prepared {
                        subscription.lastResultTag = result.tag
                        self.delivered.add(1, ordering: .relaxed)
                        prepared.send()
                    }
                }
                self.refresh(subscription)
            }
        }
    }

    /// Re-reads the owed children and sends their new state. The stream's
    /// `deliveredThrough` stays: the read is in sync with its seq for these children only,
    /// and a change to another child up to that seq may still come.
    private func refreshChildren(_ subscription: Subscription, _ rereadChildren: QueryChildrenRefresh) {
        let windowKeys = subscription.windowKeys
        let owed = subscription.owedChildren
        let probes = owed.keys.map { key in
            QueryChildProbe(key: key, mayBeInWindow: windowKeys?.contains(key.hashValue) ?? true)
        }
        subscription.owedChildren = [:]
        subscription.refreshing = true
        let sink = subscription.eventSink
        rereadChildren(probes) { result in
            let prepared: PreparedEvents? = if let result, let event = result.event, let sink {
                sink.prepareEvents([(event, result.seq)])
            } else {
                nil
            }
            self.fanout.async {
                guard let result else {
                    subscription.refreshing = false
                    guard !subscription.ended else { return }
                    // The read failed: the next change re-reads the whole result.
                    subscription.owedWhole = subscription.owedWhole ?? subscription.deliveredThrough + 1
                    subscription.owedChildren = [:]
                    return
                }
                if subscription.ended {
                    subscription.refreshing = false
                    return
                }
                let read = ChildrenRead(probes: probes, owed: owed, result: result, prepared: prepared)
                if result.seq > self.published.through {
                    // The read saw changes this queue has not been handed yet: whether they
                    // touched other children is known once they are (`publish`).
                    self.published.waiting[ObjectIdentifier(subscription)] = (subscription, read)
                    return
                }
                self.finishChildren(subscription, read)
            }
        }
    }

    /// Sends a children re-read's event, once every change up to its seq has reached this
    /// queue, when it shows a consistent state (`isConsistent`); else reads its children
    /// again with the others (on the fan-out queue).
    func finishChildren(_ subscription: Subscription, _ read: ChildrenRead) {
        subscription.refreshing = false
        guard !subscription.ended else { return }
        if let expiry = subscription.gate.expiresAt, expiry <= clock() {
            return end(subscription, .authRevoked)
        }
        guard read.isConsistent(owedChildren: subscription.owedChildren, owedWhole: subscription.owedWhole) else {
            // Read its children again, with those the changes it is newer than touched:
            // each retry reads more children, up to `maxQueryChildrenReread`, then the
            // whole result, which is one snapshot and always consistent.
            if subscription.owedWhole == nil {
                for (key, seq) in read.owed { subscription.owedChildren[key] = max(subscription.owedChildren[key] ?? seq, seq) }
                if subscription.owedChildren.count > options.maxQueryChildrenReread {
                    subscription.owedWhole = subscription.owedChildren.values.max()
                    subscription.owedChildren = [:]
                }
            }
            return refresh(subscription)
        }
        if subscription.windowKeys != nil {
            // In place: the set can hold as many keys as `maxTrackedWindowKeys`.
            for (probe, inWindow) in zip(read.probes, read.result.inWindow) {
                if inWindow {
                    subscription.windowKeys!.insert(probe.key.hashValue)
                } else {
                    subscription.windowKeys!.remove(probe.key.hashValue)
                }
            }
            if subscription.windowKeys!.count > options.maxTrackedWindowKeys { subscription.windowKeys = nil }
        }
        if let prepared = read.prepared {
            // The window no longer matches the last whole result's digest.
            subscription.lastResultTag = nil
            delivered.add(1, ordering: .relaxed)
            prepared.send()
        }
        refresh(subscription)
    }

    /// After `publish` handed this queue every change up to `published.through`: finishes
    /// the children re-reads that waited for them.
    func finishWaitingReads() {
        for (id, (subscription, read)) in published.waiting where read.result.seq <= published.through {
            published.waiting[id] = nil
            finishChildren(subscription, read)
        }
    }
}

/// A children re-read's result, with what it was asked.
struct ChildrenRead {
    var probes: [QueryChildProbe]
    /// The children it read, each with the newest change's seq that touched it then.
    var owed: [JSONKey: Int64]
    var result: QueryChildrenResult
    var prepared: PreparedEvents?

    /// Whether the client, given this read's event, has a state the data really had: the
    /// read shows its children as of its seq, and a change up to that seq to another child
    /// (`owedChildren`, or the location itself, `owedWhole`) is not in it. That is
    /// consistent only while none of its children changed at or after the oldest such
    /// change: the event then shows the state just before it. Otherwise a read slower
    /// than the writes would show a later write to one child before an earlier write to
    /// another.
    func isConsistent(owedChildren: [JSONKey: Int64], owedWhole: Int64?) -> Bool {
        let seq = result.seq
        var newestRead = owed.values.max() ?? 0
        var oldestMissed = owedWhole.flatMap { $0 <= seq ? $0 : nil }
        for (key, changed) in owedChildren where changed <= seq {
            if owed[key] != nil {
                newestRead = max(newestRead, changed)
            } else {
                oldestMissed = min(oldestMissed ?? changed, changed)
            }
        }
        guard let oldestMissed else { return true }
        return newestRead < oldestMissed
    }
}

/// The newest change seq `publish` handed the fan-out queue, and the children re-reads
/// that saw newer ones and wait for them, by stream (a stream that ends drops its own).
///
/// `@unchecked Sendable`: read and written only on the hub's fan-out queue.
final class PublishedChanges: @unchecked Sendable {
    var through: Int64 = 0
    var waiting: [ObjectIdentifier: (subscription: Subscription, read: ChildrenRead)] = [:]
}
