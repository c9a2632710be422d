import Dispatch
import HearthJSON
import Synchronization

/// Live change streams (docs/design.md §5): who listens where, and the fan-out of committed
/// changes to them in commit order.
///
/// Threads: `register`/`remove`/`review` from anywhere; `publish` and `watchedLocations`
/// from the store's writer queue; all per-subscriber state changes happen on one serial
/// fan-out queue, so each subscriber sees its events in commit order, and the writer only
/// pays for matching (a walk of the trie) before it acknowledges its writes.
///
/// The fan-out queue does no per-listener work for a location whose listeners are all
/// live and unchanged since its last event: their sinks were prepared once by the
/// transport (`PreparedBroadcast`, kept in a `SteadyGroup`), and the event is handed to
/// that whole; the transport's I/O queues then each send to their own connections. Any
/// change of the location's listeners (one joins, starts, ends, or its credential
/// expires) drops the group, and the next event takes the per-listener path and makes a
/// new one.
public final class StreamHub: Sendable {
    public let options: StreamOptions
    let clock: @Sendable () -> Int64
    private let prepareBroadcast: PrepareBroadcast
    let fanout = DispatchQueue(label: "hearth.streams.fanout")
    private let steady = SteadyGroups()
    let published = PublishedChanges()

    private struct Registry: ~Copyable {
        var trie = SubscriptionTrie()
        var all: [ObjectIdentifier: Subscription] = [:]
        /// Subscribers whose access is re-decided after every batch.
        var dependent: [ObjectIdentifier: Subscription] = [:]
        var perAddress: [String: Int] = [:]
    }
    private let registry = Mutex(Registry())
    private let timers = Mutex<[DispatchSourceTimer]>([])
    let delivered = Atomic<Int>(0)
    private let ended = Atomic<Int>(0)

    /// - Parameters:
    ///   - clock: ms since the epoch, compared with `StreamGate.expiresAt`.
    ///   - prepareBroadcast: prepares the sinks of one location, all at once, so a
    ///     transport can sort them and encode each event once for all of them. A steady
    ///     group keeps what it made for every event until the location's listeners change;
    ///     the per-listener path prepares the sinks an event reaches and sends it once.
    ///     The default (`SinksBroadcast`) delivers to each sink in turn.
    public init(
        options: StreamOptions = StreamOptions(),
        clock: @escaping @Sendable () -> Int64,
        prepareBroadcast: @escaping PrepareBroadcast = { sinks in SinksBroadcast(sinks: sinks) }
    ) {
        self.options = options
        self.clock = clock
        self.prepareBroadcast = prepareBroadcast
    }

    // MARK: Opening and closing

    /// Registers a stream at `location` before its initial snapshot is read, so no change
    /// committed after that read can be missed. Changes are held until `start`.
    ///
    /// `dependsOnData`: the read decision looked at data (`data`, `root`) or the clock
    /// (`now`), so `publish` re-decides it after every batch. Until the first decision is
    /// made, pass true (the safe side), then `setDependsOnData`.
    ///
    /// `refresh`: for a stream with a query, how to re-read its result (see `QueryRefresh`).
    /// `rereadChildren`: for a query stream whose window is decided child by child, how
    /// to re-read only the children a change touched (see `QueryChildrenRefresh`).
    public func register(
        location: DataPath, gate: any StreamGate, address: String, dependsOnData: Bool = true, refresh: QueryRefresh? = nil,
        rereadChildren: QueryChildrenRefresh? = nil
    ) throws(StreamLimitError) -> Subscription {
        let subscription = Subscription(location: location, gate: gate, address: address, refresh: refresh,
                                        rereadChildren: rereadChildren)
        let id = ObjectIdentifier(subscription)
        let refusal: StreamLimitError? = registry.withLock { registry in
            if registry.all.count >= options.maxStreams { return .tooManyStreams }
            if registry.perAddress[address, default: 0] >= options.maxStreamsPerAddress { return .tooManyStreamsFromAddress }
            registry.all[id] = subscription
            if dependsOnData { registry.dependent[id] = subscription }
            registry.perAddress[address, default: 0] += 1
            registry.trie.insert(subscription)
            return nil
        }
        if let refusal { throw refusal }
        return subscription
    }

    /// Hands the stream its sink and its first events: `initial` (the snapshot as `put /`,
    /// or the replayed events of a resume, each with its seq), which bring it in sync with
    /// change `seq`; then the changes held since `register` that are newer than `seq`. The
    /// transport encodes the events itself (SSE frames, wire pushes); `initial` is
    /// prepared (`StreamEventSink.prepareEvents`) on the caller's queue, before the
    /// fan-out queue, and the changes held since `register` wait for it there.
    /// For a query stream, `resultTag` is the tag of the result `initial` carries, and
    /// `resultKeys` its `childKeyHashes`.
    public func start(_ subscription: Subscription, events sink: any StreamEventSink, initial: [(event: StreamEvent, seq: Int64)],
                      through seq: Int64, resultTag: [UInt8]? = nil, resultKeys: Set<Int>? = nil) {
        start(subscription, events: sink, initial: sink.prepareEvents(initial), through: seq, resultTag: resultTag,
              resultKeys: resultKeys)
    }

    /// `start` with the first events already prepared by the transport.
    public func start(_ subscription: Subscription, events sink: any StreamEventSink, initial: PreparedEvents,
                      through seq: Int64, resultTag: [UInt8]? = nil, resultKeys: Set<Int>? = nil) {
        fanout.async {
            if subscription.ended {
                sink.ended(subscription.finalVerdict ?? .cancel)
                return
            }
            initial.send()
            var through = seq
            if subscription.refresh != nil {
                subscription.lastResultTag = resultTag
                subscription.windowKeys = resultKeys
            } else {
                for change in subscription.pending ?? [] where change.seq > through {
                    if let event = StreamEvent.of(change, at: subscription.location) { sink.deliver(event, seq: change.seq) }
                    through = change.seq
                }
            }
            subscription.pending = nil
            subscription.deliveredThrough = through
            subscription.eventSink = sink
            self.steady.drop(at: subscription.location)
            if subscription.refresh != nil {
                // The first result covers the changes held until now.
                self.forgetOwed(subscription, through: through)
                if subscription.owesRefresh { self.refresh(subscription) }
            }
        }
    }

    /// Runs `body` on the fan-out queue after everything queued there so far: after the
    /// events of every batch already published were handed to their sinks. A transport
    /// answers a write this way so that its client has the write's events first.
    public func afterQueuedEvents(_ body: @escaping @Sendable () -> Void) {
        fanout.async(execute: body)
    }

    /// Records whether `subscription`'s access must be re-decided after every batch.
    public func setDependsOnData(_ subscription: Subscription, _ dependsOnData: Bool) {
        let id = ObjectIdentifier(subscription)
        registry.withLock { registry in
            guard registry.all[id] != nil else { return }
            registry.dependent[id] = dependsOnData ? subscription : nil
        }
    }

    /// The stream's connection closed: forget it.
    public func remove(_ subscription: Subscription) {
        unregister(subscription)
        fanout.async {
            subscription.ended = true
            subscription.eventSink = nil
            subscription.pending = nil
            self.published.waiting[ObjectIdentifier(subscription)] = nil
            self.steady.drop(at: subscription.location)
        }
    }

    private func unregister(_ subscription: Subscription) {
        let id = ObjectIdentifier(subscription)
        registry.withLock { registry in
            guard registry.all.removeValue(forKey: id) != nil else { return }
            registry.dependent[id] = nil
            let left = registry.perAddress[subscription.address, default: 1] - 1
            registry.perAddress[subscription.address] = left > 0 ? left : nil
            registry.trie.remove(subscription)
        }
    }

    /// Ends a stream with the verdict's event (on the fan-out queue).
    func end(_ subscription: Subscription, _ verdict: StreamVerdict) {
        if subscription.ended { return }
        subscription.ended = true
        subscription.pending = nil
        published.waiting[ObjectIdentifier(subscription)] = nil
        steady.drop(at: subscription.location)
        unregister(subscription)
        ended.add(1, ordering: .relaxed)
        if let events = subscription.eventSink {
            subscription.eventSink = nil
            events.ended(verdict)
        } else {
            subscription.finalVerdict = verdict
        }
    }

    // MARK: Fan-out

    /// Called by the writer after a batch committed and before it acknowledges the writes.
    /// `recheck` re-decides, on the writer's view of exactly this batch, the access of each
    /// subscriber whose decision depends on data; a `false` ends it with `cancel` before any
    /// of the batch's events reach it.
    public func publish(_ changes: [StreamChange], recheck: (Subscription) -> Bool) {
        let (matches, dependent): ([[SubscriptionTrie.Match]], [Subscription]) = registry.withLock { registry in
            if registry.all.isEmpty { return ([], []) }
            return (changes.map { registry.trie.matches($0.path) }, Array(registry.dependent.values))
        }
        if matches.isEmpty { return }
        let denied = dependent.filter { !recheck($0) }
        fanout.async {
            for subscription in denied { self.end(subscription, .cancel) }
            let now = self.clock()
            for (change, locations) in zip(changes, matches) {
                for match in locations {
                    guard let event = StreamEvent.of(change, at: match.location) else { continue }
                    if self.deliverSteady(event, seq: change.seq, to: match, now: now) { continue }
                    var eventSinks: [any StreamEventSink] = []
                    eventSinks.reserveCapacity(match.subscribers.count)
                    for subscription in match.subscribers {
                        if subscription.ended || change.seq <= subscription.deliveredThrough { continue }
                        if let expiry = subscription.gate.expiresAt, expiry <= now {
                            self.end(subscription, .authRevoked)
                            continue
                        }
                        if subscription.refresh != nil {
                            // A query stream gets its window's new state, not the change.
                            self.owe(subscription, event, seq: change.seq)
                            if subscription.pending == nil && !subscription.refreshing { self.refresh(subscription) }
                            continue
                        }
                        if subscription.pending != nil {
                            if subscription.pending!.count >= self.options.maxPendingChanges {
                                self.end(subscription, .cancel)
                            } else {
                                subscription.pending!.append(change)
                            }
                            continue
                        }
                        subscription.deliveredThrough = change.seq
                        if let events = subscription.eventSink { eventSinks.append(events) }
                    }
                    if !eventSinks.isEmpty {
                        // Counted before the hand-off: a reader that has the event also
                        // sees it counted (ObservabilityLiveTests raced here under load).
                        self.delivered.add(eventSinks.count, ordering: .relaxed)
                        self.prepareBroadcast(eventSinks).send(event, seq: change.seq)
                    }
                }
            }
            // Every change up to here is owed where it must be: children re-reads that saw
            // them can be judged now.
            if let newest = changes.last?.seq, newest > self.published.through {
                self.published.through = newest
                self.finishWaitingReads()
            }
        }
    }

    /// Hands `event` to the location's steady group, made now if every listener there is
    /// live (on the fan-out queue). False: the per-listener path must deliver it (a
    /// listener is starting, ending, a query, or expired; or the event is not newer than
    /// what one of them has).
    private func deliverSteady(_ event: StreamEvent, seq: Int64, to match: SubscriptionTrie.Match, now: Int64) -> Bool {
        var group = steady.groups[match.location]
        if let known = group, known.generation != match.generation {
            steady.drop(at: match.location)
            group = nil
        }
        if group == nil {
            guard let made = SteadyGroup.make(match, for: seq, now: now, prepare: prepareBroadcast) else { return false }
            group = made
        }
        guard var group, seq > group.deliveredThrough, now < group.expiresAt else {
            steady.drop(at: match.location)
            return false
        }
        group.deliveredThrough = seq
        steady.groups[match.location] = group
        delivered.add(group.members.count, ordering: .relaxed)
        group.broadcast.send(event, seq: seq)
        return true
    }

    /// Subscribed locations strictly below `path` (at most `limit`, else nil), so the writer
    /// can tell which of them a write above them really changes.
    public func watchedLocations(below path: DataPath, limit: Int) -> [DataPath]? {
        registry.withLock { registry in
            registry.all.isEmpty ? [] : registry.trie.locations(below: path, limit: limit)
        }
    }

    // MARK: Access over time

    /// Re-decides every subscriber (a rules reload, a revocation poll) on the caller's
    /// thread; those that lose access are ended with the verdict's event.
    public func review(_ decide: (Subscription) -> StreamVerdict) {
        let all = registry.withLock { Array($0.all.values) }
        var losers: [(Subscription, StreamVerdict)] = []
        for subscription in all {
            let verdict = decide(subscription)
            if verdict != .keep { losers.append((subscription, verdict)) }
        }
        if losers.isEmpty { return }
        let ending = losers
        fanout.async {
            for (subscription, verdict) in ending { self.end(subscription, verdict) }
        }
    }

    /// Ends every stream with `verdict` (the node missed changes: `.reconnect`).
    public func endAll(_ verdict: StreamVerdict) {
        review { _ in verdict }
    }

    /// Sends `keep-alive` to every live stream.
    public func sendKeepAlives() {
        sendKeepAlives { _ in true }
    }

    /// Sends `keep-alive` to the live streams in slice `slice` of `slices` (the timer goes
    /// through the slices in turn, one every `slices.tick` seconds).
    func sendKeepAlives(slice: Int, of slices: KeepAliveSlices) {
        sendKeepAlives { slices.slice(of: $0) == slice }
    }

    /// Sends `keep-alive` to the live streams whose identity is `chosen` (picked under the
    /// registry's lock; sent on the fan-out queue).
    private func sendKeepAlives(to chosen: (ObjectIdentifier) -> Bool) {
        let some = registry.withLock { registry in
            registry.all.compactMap { id, subscription in chosen(id) ? subscription : nil }
        }
        if some.isEmpty { return }
        fanout.async {
            for subscription in some where !subscription.ended { subscription.eventSink?.keepAlive() }
        }
    }

    /// Ends streams whose credential expired (the timer does this every
    /// `expirySweepInterval`).
    public func sweepExpired() {
        let now = clock()
        review { subscription in
            if let expiry = subscription.gate.expiresAt, expiry <= now { return .authRevoked }
            return .keep
        }
    }

    /// Starts the keep-alive and expiry timers; `stop()` cancels them. Keep-alives go out a
    /// slice of the streams at a time (`KeepAliveSlices`): each stream gets one every
    /// `keepAliveInterval`, and no tick sends to all of them at once.
    public func startTimers() {
        let (slices, sweepEvery, queue) = (KeepAliveSlices(interval: options.keepAliveInterval), options.expirySweepInterval, fanout)
        let ticks = Atomic<Int>(0)
        timers.withLock { timers in
            timers.append(Self.timer(every: slices.tick, on: queue) { [weak self] in
                let tick = ticks.add(1, ordering: .relaxed).oldValue
                self?.sendKeepAlives(slice: tick % slices.count, of: slices)
            })
            timers.append(Self.timer(every: sweepEvery, on: queue) { [weak self] in self?.sweepExpired() })
        }
    }

    /// A repeating timer on `queue` every `seconds` (at least 1 ms), late by at most
    /// `1/leewayDivisor` of its interval; the caller cancels it.
    public static func timer(every seconds: Double, on queue: DispatchQueue, leewayDivisor: Int = 20,
                             _ body: @escaping @Sendable () -> Void) -> DispatchSourceTimer {
        let timer = DispatchSource.makeTimerSource(queue: queue)
        let nanos = max(1_000_000, Int(seconds * 1e9))
        timer.schedule(deadline: .now() + .nanoseconds(nanos), repeating: .nanoseconds(nanos), leeway: .nanoseconds(nanos / leewayDivisor))
        timer.setEventHandler(handler: body)
        timer.activate()
        return timer
    }

    /// Cancels the timers and ends every stream (server shutdown).
    public func stop() {
        timers.withLock { timers in
            for timer in timers { timer.cancel() }
            timers = []
        }
    }

    /// Waits until everything queued on the fan-out queue ran (tests, shutdown).
    public func drain() {
        fanout.sync {}
    }

    // MARK: Numbers

    public var openStreams: Int { registry.withLock { $0.all.count } }
    /// Events written to subscribers since start (one event to N subscribers counts N).
    public var eventsDelivered: Int { delivered.load(ordering: .relaxed) }
    /// Streams the hub ended (cancel, auth_revoked) since start.
    public var streamsEnded: Int { ended.load(ordering: .relaxed) }
}

/// The hub's steady groups by location.
///
/// `@unchecked Sendable`: `groups` is read and written only on the hub's fan-out queue.
final class SteadyGroups: @unchecked Sendable {
    var groups: [DataPath: SteadyGroup] = [:]

    /// Gives up the group at `location`, if any; its members keep what it delivered.
    func drop(at location: DataPath) {
        groups.removeValue(forKey: location)?.release()
    }
}
