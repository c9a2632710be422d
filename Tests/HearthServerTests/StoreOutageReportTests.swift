import Testing
@testable import HearthServer

/// The outage lines of the log from literals: one warning when the store
/// stops answering, one info when it answers again, nothing for every failed check between,
/// and no new announcement within `quietMilliseconds` of the last.
@Suite struct StoreOutageReportTests {
    @Test func anOutageIsAnnouncedOnceAndItsEndOnce() {
        var report = StoreOutageReport()
        #expect(report.reached(at: 0) == nil)
        #expect(report.unreachable("refused", at: 1_000) == .started(reason: "refused"))
        for check in 1...10 { #expect(report.unreachable("refused", at: 1_000 + Int64(check) * 2_000) == nil) }
        #expect(report.reached(at: 31_000) == .ended(downMilliseconds: 30_000))
        #expect(report.reached(at: 33_000) == nil)
    }

    /// An outage that starts less than `quietMilliseconds` after the last announced one is
    /// neither announced nor is its end; at exactly that distance it is.
    @Test func flappingOutagesAreAnnouncedAtMostOncePerQuietPeriod() {
        let quiet = StoreOutageReport.quietMilliseconds
        var report = StoreOutageReport()
        #expect(report.unreachable("a", at: 0) == .started(reason: "a"))
        #expect(report.reached(at: 100) == .ended(downMilliseconds: 100))
        #expect(report.unreachable("b", at: quiet - 1) == nil)
        #expect(report.downSince == quiet - 1)
        #expect(report.reached(at: quiet) == nil)
        #expect(report.unreachable("c", at: quiet) == .started(reason: "c"))
        #expect(report.reached(at: quiet + 5) == .ended(downMilliseconds: 5))
    }
}
