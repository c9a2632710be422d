import HearthTesting
import Synchronization
import Testing
@testable import HearthJSON

/// A clock tests can set.
private final class TestClock: Sendable {
    private let ms = Mutex<Int64>(0)
    init(_ start: Int64) { ms.withLock { $0 = start } }
    func set(_ value: Int64) { ms.withLock { $0 = value } }
    func read() -> Int64 { ms.withLock { $0 } }
}

/// Returns the given words in turn, then repeats the last.
private struct ScriptedRandom: RandomNumberGenerator, Sendable {
    var words: [UInt64]
    mutating func next() -> UInt64 { words.count > 1 ? words.removeFirst() : words[0] }
}

@Suite("PushIDGenerator")
struct PushIDGeneratorTests {
    private let alphabet = Set(PushIDGenerator.alphabet)

    @Test func shapeAndAlphabet() {
        #expect(String(decoding: PushIDGenerator.alphabet, as: UTF8.self)
            == "-0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ_abcdefghijklmnopqrstuvwxyz")
        #expect(PushIDGenerator.alphabet == PushIDGenerator.alphabet.sorted())  // ASCII order
        var generator = PushIDGenerator()
        for _ in 0..<1000 {
            let id = generator.next()
            #expect(id.utf8.count == 20)
            #expect(id.utf8.allSatisfy(alphabet.contains))
        }
    }

    @Test(arguments: [
        (Int64(0), "--------"),
        (1, "-------0"),
        (63, "-------z"),
        (64, "------0-"),
        (1_700_000_000_000, "-NjEtLV-"),  // 2023-11-14; expected value computed independently in Python
        (Int64(1 << 48) - 1, "zzzzzzzz"),
    ] as [(Int64, String)])
    func timestampPrefixAgainstAFixedClock(_ ms: Int64, _ prefix: String) {
        var generator = PushIDGenerator(clock: { ms }, random: SplitMix64(seed: 1))
        #expect(generator.next().prefix(8) == prefix[...])
    }

    @Test func randomPartComesFromTheRandomSource() {
        var zeros = PushIDGenerator(clock: { 0 }, random: ScriptedRandom(words: [0]))
        #expect(zeros.next() == "--------------------")
        var ones = PushIDGenerator(clock: { 0 }, random: ScriptedRandom(words: [.max]))
        #expect(ones.next() == "--------zzzzzzzzzzzz")
    }

    @Test func sameMillisecondIncrementsWithCarry() {
        var generator = PushIDGenerator(clock: { 5 }, random: ScriptedRandom(words: [0]))
        #expect(generator.next() == "-------4------------")
        #expect(generator.next() == "-------4-----------0")
        #expect(generator.next() == "-------4-----------1")

        // The generator takes random digits 1–10 from the first word's low 60 bits (6 bits
        // each, low bits first) and digits 11–12 from the second word.
        // Last digit 'z' (63) wraps to '-' and carries into the one before.
        var carry = PushIDGenerator(clock: { 5 }, random: ScriptedRandom(words: [0, 63 << 6]))
        #expect(carry.next() == "-------4-----------z")
        #expect(carry.next() == "-------4----------0-")
        // A carry that ripples through eleven 'z's.
        let nineZAfterAZero: UInt64 = ((1 << 60) - 1) & ~63
        var ripple = PushIDGenerator(clock: { 5 }, random: ScriptedRandom(words: [nineZAfterAZero, 63 | 63 << 6]))
        #expect(ripple.next() == "-------4-zzzzzzzzzzz")
        #expect(ripple.next() == "-------40-----------")
    }

    @Test func counterOverflowMovesTimeForward() {
        var generator = PushIDGenerator(clock: { 5 }, random: ScriptedRandom(words: [.max]))
        let first = generator.next()
        #expect(first == "-------4zzzzzzzzzzzz")
        let second = generator.next()
        #expect(second > first)
        #expect(second.hasPrefix("-------5"))
    }

    @Test func idsIncreaseWithTheClockAndWithinAMillisecond() {
        let clock = TestClock(1_000)
        var generator = PushIDGenerator(clock: { clock.read() }, random: SplitMix64(seed: 3))
        var previous = generator.next()
        for step in 0..<2_000 {
            if step % 7 == 0 { clock.set(clock.read() + 1) }
            let id = generator.next()
            #expect(id > previous)
            previous = id
        }
    }

    @Test func clockGoingBackwardsKeepsIdsMonotonic() {
        let clock = TestClock(10_000)
        var generator = PushIDGenerator(clock: { clock.read() }, random: SplitMix64(seed: 4))
        let a = generator.next()
        clock.set(5_000)
        let b = generator.next()
        let c = generator.next()
        #expect(a < b && b < c)
        #expect(b.prefix(8) == a.prefix(8))  // keeps the later timestamp
        clock.set(10_001)
        let d = generator.next()
        #expect(d > c)
        #expect(d.prefix(8) != a.prefix(8))
    }

    @Test func randomPartsDifferAcrossMilliseconds() {
        let clock = TestClock(0)
        var generator = PushIDGenerator(clock: { clock.read() }, random: SplitMix64(seed: 5))
        var suffixes = Set<Substring>()
        for t in 0..<500 {
            clock.set(Int64(t))
            suffixes.insert(generator.next().dropFirst(8))
        }
        #expect(suffixes.count == 500)
    }

    @Test func systemClockIsPlausible() {
        let ms = PushIDGenerator.systemMilliseconds()
        #expect(ms > 1_600_000_000_000)  // after 2020
        #expect(ms < 10_000_000_000_000)
    }

    @Test func sharedGeneratorIsUniqueAndOrderedAcrossThreads() async {
        let shared = SharedPushIDGenerator(PushIDGenerator(clock: { 42 }))
        let batches = await withTaskGroup(of: [String].self) { group in
            for _ in 0..<8 {
                group.addTask { (0..<500).map { _ in shared.next() } }
            }
            var all: [[String]] = []
            for await batch in group { all.append(batch) }
            return all
        }
        for batch in batches { #expect(batch == batch.sorted()) }
        let all = batches.flatMap { $0 }
        #expect(Set(all).count == 4_000)
    }
}
