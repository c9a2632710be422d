import Dispatch
import Synchronization
import Testing
@testable import HearthHTTP

/// The answers lane of an I/O loop's mailbox (`IOLoop.postAnswer`): answers run before
/// the ordinary work waiting with them, between the blocks of a batch, and inside a long
/// walk every `IOLoop.answerCheckInterval` items, so an acknowledgement never waits for a
/// whole fan-out to thousands of listeners.
@Suite("IOLoop: answers lane")
struct IOLoopAnswersTests {
    /// What ran on the loop, in order.
    final class Timeline: Sendable {
        private let entries = Mutex<[String]>([])
        func add(_ entry: String) { entries.withLock { $0.append(entry) } }
        var all: [String] { entries.withLock { $0 } }
    }

    /// Holds `loop` busy until the returned release is called.
    static func hold(_ loop: IOLoop) -> () -> Void {
        let gate = DispatchSemaphore(value: 0), busy = DispatchSemaphore(value: 0)
        loop.queue.async {
            busy.signal()
            gate.wait()
        }
        busy.wait()
        return { gate.signal() }
    }

    @Test func answersRunBeforeTheOrdinaryWorkWaitingWithThem() {
        let loop = IOLoop(label: "test.answers.order")
        let timeline = Timeline()
        let release = Self.hold(loop)
        loop.post { timeline.add("push 1") }
        loop.postAnswer { timeline.add("answer 1") }
        loop.post { timeline.add("push 2") }
        loop.postAnswer { timeline.add("answer 2") }
        release()
        loop.queue.sync {}  // the batch ran
        #expect(timeline.all == ["answer 1", "answer 2", "push 1", "push 2"])
    }

    @Test func anAnswerPostedDuringABlockRunsBeforeTheNextBlockOfTheBatch() {
        let loop = IOLoop(label: "test.answers.between")
        let timeline = Timeline()
        let release = Self.hold(loop)
        loop.post {
            timeline.add("push 1")
            loop.postAnswer { timeline.add("answer") }
        }
        loop.post { timeline.add("push 2") }
        release()
        loop.queue.sync {}
        #expect(timeline.all == ["push 1", "answer", "push 2"])
    }

    /// A walk of three slices and a bit: an answer posted at its sixth item runs right
    /// after the first slice (item `answerCheckInterval - 1`), not at the walk's end; one
    /// posted during the last, short slice runs right after the walk.
    @Test func aLongWalkLetsAnswersInAfterEverySlice() {
        let loop = IOLoop(label: "test.answers.walk")
        let interval = IOLoop.answerCheckInterval
        let timeline = Timeline()
        let items = 3 * interval + 10
        loop.post {
            loop.forEach(0..<items) { item in
                timeline.add("\(item)")
                if item == 5 { loop.postAnswer { timeline.add("answer A") } }
                if item == 3 * interval + 2 { loop.postAnswer { timeline.add("answer B") } }
            }
            timeline.add("walked")
        }
        loop.queue.sync {}
        let all = timeline.all
        #expect(all.count == items + 3)
        #expect(all.firstIndex(of: "answer A") == interval, "after items 0..<\(interval)")
        #expect(all.firstIndex(of: "answer B") == items + 2, "after the walk: \(all.suffix(4))")
        #expect(all.filter { !$0.hasPrefix("answer") } == (0..<items).map { "\($0)" } + ["walked"])
    }

    /// A walk no longer than one slice runs no answer inside itself: they run after it.
    @Test func aWalkOfOneSliceRunsNoAnswerInside() {
        let loop = IOLoop(label: "test.answers.short")
        let timeline = Timeline()
        loop.post {
            loop.forEach(0..<(IOLoop.answerCheckInterval - 1)) { item in
                if item == 0 { loop.postAnswer { timeline.add("answer") } }
                timeline.add("\(item)")
            }
            timeline.add("walked")
        }
        loop.queue.sync {}
        #expect(timeline.all.suffix(2) == ["walked", "answer"])
    }

    /// An answer that walks many items itself does not run the answers posted meanwhile
    /// inside its walk: they run after it, in the order posted.
    @Test func answersDoNotNest() {
        let loop = IOLoop(label: "test.answers.nest")
        let timeline = Timeline()
        let release = Self.hold(loop)
        loop.postAnswer {
            loop.forEach(0..<(2 * IOLoop.answerCheckInterval)) { item in
                if item == 0 { loop.postAnswer { timeline.add("second") } }
            }
            timeline.add("first")
        }
        release()
        loop.queue.sync {}
        loop.queue.sync {}  // the second answer's own turn, if it was scheduled anew
        #expect(timeline.all == ["first", "second"])
    }

    /// Answers posted from many threads while the loop is busy all run, once each.
    @Test func answersFromManyThreadsRunOnceEach() {
        let loop = IOLoop(label: "test.answers.threads")
        let ran = Mutex<[Int: Int]>([:])
        let release = Self.hold(loop)
        DispatchQueue.concurrentPerform(iterations: 400) { i in
            if i % 2 == 0 {
                loop.postAnswer { ran.withLock { $0[i, default: 0] += 1 } }
            } else {
                loop.post { ran.withLock { $0[i, default: 0] += 1 } }
            }
        }
        release()
        loop.queue.sync {}
        let counts = ran.withLock { $0 }
        #expect(counts.count == 400 && counts.values.allSatisfy { $0 == 1 })
    }
}
