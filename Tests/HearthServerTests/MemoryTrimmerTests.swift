import Dispatch
import Testing
@testable import HearthServer

@Suite struct MemoryTrimmerTests {
    /// Small exchanges never trim; a large one trims once, and large ones before that trim
    /// ran share it.
    @Test func largeExchangesTrimOnceSmallOnesNever() {
        let done = DispatchSemaphore(value: 0)
        let trimmer = MemoryTrimmer(onTrim: { done.signal() })
        trimmer.noteExchange(bytes: MemoryTrimmer.thresholdBytes - 1)
        trimmer.noteExchange(bytes: 0)
        #expect(trimmer.trims == 0)
        trimmer.noteExchange(bytes: MemoryTrimmer.thresholdBytes)
        trimmer.noteExchange(bytes: 50 << 20)  // while the first is scheduled: shares it
        #expect(done.wait(timeout: .now() + 30) == .success)
        #expect(trimmer.trims == 1)
        trimmer.noteExchange(bytes: MemoryTrimmer.thresholdBytes - 1)
        trimmer.noteExchange(bytes: 2 << 20)  // after it ran: a new trim
        #expect(done.wait(timeout: .now() + 30) == .success)
        #expect(trimmer.trims == 2)
    }
}
