import Testing
@testable import HearthHTTP

/// The session's protocol side from byte literals: what each input asks the connection to do.
@Suite("WebSocket: protocol state")
struct WebSocketProtocolStateTests {
    static func received(_ state: inout WebSocketProtocolState, _ bytes: [UInt8], now: UInt64 = 0) -> [WebSocketProtocolState.Action] {
        bytes.withUnsafeBytes { state.received($0, now: now) }
    }

    @Test func messagesArePassedOnAndPingsAnswered() {
        var state = WebSocketProtocolState(limits: WebSocketLimits(), now: 0)
        let actions = Self.received(&state, clientFrame(0x1, Array("hi".utf8)) + clientFrame(0x9, [7]) + clientFrame(0x2, [1]))
        #expect(actions == [.deliver(.text(Array("hi".utf8))), .send([0x8A, 0x01, 0x07]), .deliver(.binary([1]))])
        #expect(!state.closeSent)
    }

    @Test func aPeersCloseIsEchoedAndEndsTheSession() {
        var state = WebSocketProtocolState(limits: WebSocketLimits(), now: 0)
        let actions = Self.received(&state, clientFrame(0x8, [0x0F, 0xA1]) + clientFrame(0x1, Array("late".utf8)))
        #expect(actions == [.finish([0x88, 0x02, 0x0F, 0xA1])])  // the same code; nothing after it
        #expect(state.closeCode == WebSocketCloseCode(rawValue: 4001))
        // An empty close is answered with 1000.
        var other = WebSocketProtocolState(limits: WebSocketLimits(), now: 0)
        #expect(Self.received(&other, clientFrame(0x8, [])) == [.finish([0x88, 0x02, 0x03, 0xE8])])
        #expect(other.closeCode == nil)
    }

    @Test func aBadFrameFailsTheSessionWithItsCode() {
        var state = WebSocketProtocolState(limits: WebSocketLimits(), now: 0)
        let actions = Self.received(&state, clientFrame(0x1, Array("ok".utf8)) + clientFrame(0x1, [0xFF]))
        #expect(actions == [.deliver(.text(Array("ok".utf8))), .finish(WebSocketFrameWriter.close(.invalidPayload, reason: "Text is not valid UTF-8"))])
        #expect(state.closeCode == .invalidPayload)
        #expect(Self.received(&state, clientFrame(0x1, Array("more".utf8))).isEmpty)
    }

    @Test func ourCloseIsSentOnceAndSilencesTheRest() {
        var state = WebSocketProtocolState(limits: WebSocketLimits(), now: 0)
        #expect(state.close(.goingAway, reason: "bye", now: 1) == WebSocketFrameWriter.close(.goingAway, reason: "bye"))
        #expect(state.close(.normal, reason: "", now: 2) == nil)
        #expect(state.closeCode == .goingAway)
        #expect(Self.received(&state, clientFrame(0x8, [0x03, 0xE9])).isEmpty)
        #expect(state.tick(now: .max) == nil)  // no pings once closing
    }

    @Test func ticksPingOnSilenceAndDropADeadPeer() {
        var limits = WebSocketLimits()
        limits.pingInterval = 1
        limits.pongTimeout = 1
        var state = WebSocketProtocolState(limits: limits, now: 0)
        #expect(state.tick(now: 999_999_999) == nil)
        #expect(state.tick(now: 1_000_000_000) == .send([0x89, 0x00]))
        #expect(state.tick(now: 1_500_000_000) == nil)
        #expect(state.tick(now: 2_000_000_000) == .closeNow)
    }
}
