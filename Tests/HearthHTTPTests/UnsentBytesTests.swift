import Testing
@testable import HearthHTTP

/// The ledger of unsent response bytes an application shares with the server
/// (`UnsentBytes`, bounded by `HTTPLimits.maxUnsentBytes`), from literals: past the bound a
/// client that is behind already, or a message over `HTTPLimits.alwaysSentBytes`, is
/// refused and nothing is counted; a small message to a client with nothing waiting goes.
@Suite("Unsent bytes: the shared ledger")
struct UnsentBytesTests {
    static let always = HTTPLimits.alwaysSentBytes

    @Test func theBoundIsCrossed() {
        let ledger = UnsentBytes(limit: 4 * Self.always)
        #expect(ledger.hold(3 * Self.always, alreadyHeld: 0))
        #expect(ledger.hold(Self.always, alreadyHeld: 3 * Self.always))  // at the bound, not past it
        #expect(ledger.current == 4 * Self.always)
        #expect(!ledger.hold(1, alreadyHeld: 4 * Self.always))  // behind already
        #expect(!ledger.hold(Self.always + 1, alreadyHeld: 0))  // too large to always go
        #expect(ledger.current == 4 * Self.always, "a refusal counts nothing")
        #expect(ledger.hold(Self.always, alreadyHeld: 0), "a small message to a client with nothing waiting always goes")
        ledger.release(5 * Self.always)
        #expect(ledger.current == 0)
        #expect(ledger.hold(4 * Self.always, alreadyHeld: 0), "room again once released")
    }

    /// A server given a ledger counts its connections' output in it, and reports it.
    @Test func aServerSharesTheLedgerItIsGiven() {
        var configuration = HTTPServerConfiguration(port: 0)
        let ledger = UnsentBytes(limit: 1 << 20)
        configuration.unsentBytes = ledger
        let server = HTTPServer(configuration: configuration, handler: NoHandler())
        #expect(ledger.hold(1000, alreadyHeld: 0))
        #expect(server.stats.unsentBytes == 1000)
        #expect(!ledger.hold(1 << 20, alreadyHeld: 1000))
        #expect(server.stats.unsentRefusals == 1, "a refused hold is counted with the server's refusals")
        #expect(server.counters.unsent === ledger)
    }

    private struct NoHandler: HTTPHandler {
        func handle(_ request: HTTPRequest, responder: HTTPResponder) {}
    }
}
