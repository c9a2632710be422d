import Testing
@testable import HearthTriggers

/// The per-location scheduler from literals: which event goes next, what is held back,
/// what a sweep costs.
@Suite struct LocationSchedulerTests {
    typealias Scheduler = LocationScheduler<String>

    /// Records `id:location` (due now unless `due` says otherwise).
    static func records(_ text: String, due: [Int64: Int64] = [:]) -> [(id: Int64, location: String, dueAt: Int64, bytes: Int, item: String)] {
        text.split(separator: " ").map { pair in
            let parts = pair.split(separator: ":")
            let id = Int64(parts[0])!
            return (id, String(parts[1]), due[id] ?? 0, 10, String(pair))
        }
    }

    /// Takes every event `next` gives now, as `id:location`.
    static func drain(_ scheduler: inout Scheduler, now: Int64 = 100) -> [String] {
        var started: [String] = []
        while let entry = scheduler.next(now: now) { started.append(entry.item) }
        return started
    }

    static func entry(_ scheduler: Scheduler, _ id: Int64, _ location: String) -> Scheduler.Entry {
        Scheduler.Entry(id: id, location: location, dueAt: 0, bytes: 10, item: "\(id):\(location)")
    }

    @Test func oneEventPerLocationAtOnceTheOldestFirst() {
        var scheduler = Scheduler(maxConcurrency: 16, capacity: 100, capacityBytes: 1 << 20)
        scheduler.accept(Self.records("1:a 2:a 3:b 4:c 5:b"), requested: 64, now: 100)
        #expect(scheduler.reachedEnd && scheduler.cursor == 5)
        #expect(Self.drain(&scheduler) == ["1:a", "3:b", "4:c"])
        scheduler.finished(Self.entry(scheduler, 3, "b"), .done)
        #expect(Self.drain(&scheduler) == ["5:b"], "b's next event goes once its first is done; a is still busy")
        scheduler.finished(Self.entry(scheduler, 1, "a"), .done)
        #expect(Self.drain(&scheduler) == ["2:a"])
    }

    @Test func maxConcurrencyBoundsTheAttemptsUnderWay() {
        var scheduler = Scheduler(maxConcurrency: 2, capacity: 100, capacityBytes: 1 << 20)
        scheduler.accept(Self.records("1:a 2:b 3:c 4:d"), requested: 64, now: 100)
        #expect(Self.drain(&scheduler) == ["1:a", "2:b"])
        scheduler.finished(Self.entry(scheduler, 2, "b"), .done)
        #expect(Self.drain(&scheduler) == ["3:c"])
        #expect(scheduler.inFlight.count == 2)
    }

    /// A failed event holds back its own location only, until its retry is due; its later
    /// events are dropped from the buffer and skipped by the rest of the sweep.
    @Test func aFailureHoldsBackItsLocationAlone() {
        var scheduler = Scheduler(maxConcurrency: 16, capacity: 100, capacityBytes: 1 << 20)
        scheduler.accept(Self.records("1:p 2:a 3:p 4:b"), requested: 4, now: 100)
        #expect(Self.drain(&scheduler) == ["1:p", "2:a", "4:b"])
        scheduler.finished(Self.entry(scheduler, 1, "p"), .retry(at: 5_000))
        #expect(scheduler.held == ["p": 5_000] && scheduler.queue.isEmpty, "p's later event 3 is dropped")
        scheduler.accept(Self.records("5:p 6:c"), requested: 64, now: 200)
        #expect(Self.drain(&scheduler, now: 200) == ["6:c"], "p's event 5 is skipped as it is read")
        #expect(scheduler.nextSweep(idle: 2_000, minPass: 1_000, cheapReads: 64) == 2_000, "the idle poll comes before p's retry")
        // A new sweep reads p's events again; its head is not due until 5 000.
        scheduler.restart(now: 2_000)
        scheduler.accept(Self.records("1:p 3:p 5:p", due: [1: 5_000]), requested: 64, now: 2_000)
        #expect(Self.drain(&scheduler, now: 2_000).isEmpty && scheduler.held == ["p": 5_000])
        scheduler.restart(now: 5_000)
        scheduler.accept(Self.records("1:p 3:p 5:p", due: [1: 5_000]), requested: 64, now: 5_000)
        #expect(Self.drain(&scheduler, now: 5_000) == ["1:p"])
    }

    @Test func withMaxConcurrencyOneAFailureHoldsTheWholeTrigger() {
        // The deliverer gives every event one location ("" there) at maxConcurrency 1.
        var scheduler = Scheduler(maxConcurrency: 1, capacity: 100, capacityBytes: 1 << 20)
        scheduler.accept(Self.records("1:x 2:x"), requested: 64, now: 100)
        #expect(Self.drain(&scheduler) == ["1:x"])
        scheduler.finished(Self.entry(scheduler, 1, "x"), .retry(at: 900))
        #expect(Self.drain(&scheduler).isEmpty && scheduler.queue.isEmpty)
    }

    /// Events read again by a new sweep while buffered or in flight are not taken twice.
    @Test func aNewSweepDoesNotTakeAnEventTwice() {
        var scheduler = Scheduler(maxConcurrency: 16, capacity: 100, capacityBytes: 1 << 20)
        scheduler.accept(Self.records("1:a 2:a"), requested: 64, now: 100)
        #expect(Self.drain(&scheduler) == ["1:a"])
        scheduler.restart(now: 100)
        scheduler.accept(Self.records("1:a 2:a 3:b"), requested: 64, now: 100)
        #expect(scheduler.queue.map(\.id) == [2, 3])
        #expect(Self.drain(&scheduler) == ["3:b"])
    }

    /// The buffer is bounded: a read stops at the first event past it, the cursor before it.
    @Test func theBufferIsBoundedInEventsAndBytes() {
        var scheduler = Scheduler(maxConcurrency: 16, capacity: 3, capacityBytes: 1 << 20)
        scheduler.accept(Self.records("1:a 2:a 3:a 4:b 5:c"), requested: 5, now: 100)
        #expect(scheduler.queue.map(\.id) == [1, 2, 3] && scheduler.cursor == 3 && !scheduler.wantsRead)
        #expect(!scheduler.reachedEnd)
        var bytes = Scheduler(maxConcurrency: 16, capacity: 100, capacityBytes: 25)
        bytes.accept(Self.records("1:a 2:b 3:c"), requested: 3, now: 100)
        #expect(bytes.queue.map(\.id) == [1, 2] && bytes.cursor == 2)
        var big = Scheduler(maxConcurrency: 16, capacity: 100, capacityBytes: 1)
        big.accept(Self.records("1:a 2:b"), requested: 2, now: 100)
        #expect(big.queue.map(\.id) == [1], "one event always fits")
    }

    /// One poisoned location among 100 000 pending events of others: one sweep reads every
    /// event once, holds the poisoned one back, and never searches the buffer per event.
    @Test func aPoisonedLocationCostsOneReadOfTheBacklog() {
        var scheduler = Scheduler(maxConcurrency: 16, capacity: 1024, capacityBytes: 1 << 30)
        scheduler.accept(Self.records("1:p"), requested: 1, now: 100)
        let poisoned = scheduler.next(now: 100)!
        scheduler.finished(poisoned, .retry(at: 10_000))
        var started = 0
        var id: Int64 = 1
        var reads = 0
        while !scheduler.reachedEnd {
            // 64 per read, every other event the poisoned location's, the rest 20 others'.
            let batch = (0..<64).compactMap { _ -> (id: Int64, location: String, dueAt: Int64, bytes: Int, item: String)? in
                id += 1
                guard id <= 100_001 else { return nil }
                return (id, id % 2 == 0 ? "p" : "l\(id % 20)", 0, 10, "")
            }
            scheduler.accept(batch, requested: 64, now: 100)
            reads += 1
            while let entry = scheduler.next(now: 100) {
                started += 1
                scheduler.finished(entry, .done)
            }
        }
        #expect(started == 50_000, "every other location's event started, none of p's")
        #expect(reads == 100_000 / 64 + 1 && scheduler.sweepReads == 100_001)
        #expect(scheduler.held == ["p": 10_000])
        #expect(scheduler.nextSweep(idle: 2_000, minPass: 1_000, cheapReads: 64) == 2_000)
    }

    /// A sweep that read much is not repeated within `minPass`, one that read little at once.
    @Test func anExpensiveSweepWaitsForTheMinimumPass() {
        var scheduler = Scheduler(maxConcurrency: 16, capacity: 100, capacityBytes: 1 << 20)
        scheduler.restart(now: 1_000)
        scheduler.accept(Self.records("1:p", due: [1: 1_050]), requested: 64, now: 1_000)
        #expect(scheduler.nextSweep(idle: 2_000, minPass: 1_000, cheapReads: 64) == 1_050)
        #expect(scheduler.nextSweep(idle: 2_000, minPass: 1_000, cheapReads: 0) == 2_000)
    }

    @Test func changingMaxConcurrencyWaitsForTheAttemptsUnderWay() {
        var scheduler = Scheduler(maxConcurrency: 16, capacity: 100, capacityBytes: 1 << 20)
        scheduler.accept(Self.records("1:a 2:b"), requested: 64, now: 100)
        let first = scheduler.next(now: 100)!
        scheduler.configure(maxConcurrency: 1, now: 100)
        #expect(scheduler.queue.isEmpty && scheduler.cursor == 0)
        scheduler.accept(Self.records("2:x"), requested: 64, now: 100)
        #expect(scheduler.next(now: 100) == nil, "nothing new while the old setting's attempt runs")
        scheduler.finished(first, .done)
        #expect(scheduler.next(now: 100)?.id == 2)
    }
}
