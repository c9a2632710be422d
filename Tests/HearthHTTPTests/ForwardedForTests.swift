import Testing
@testable import HearthHTTP

/// Who the client is behind trusted proxies.
@Suite struct ForwardedForTests {
    let trusted: Set<String> = ["127.0.0.1", "10.0.0.2"]

    @Test func onlyTrustedPeersAreBelieved() {
        #expect(ForwardedFor.client(peer: "198.51.100.7", header: "203.0.113.9", trusted: trusted) == "198.51.100.7")
        #expect(ForwardedFor.client(peer: "127.0.0.1", header: "203.0.113.9", trusted: trusted) == "203.0.113.9")
        #expect(ForwardedFor.client(peer: "127.0.0.1", header: nil, trusted: trusted) == "127.0.0.1")
        #expect(ForwardedFor.client(peer: "127.0.0.1", header: "203.0.113.9", trusted: []) == "127.0.0.1")
    }

    @Test func theListIsReadFromTheNearestHop() {
        // A client may put anything on the left; only what trusted hops appended counts.
        #expect(ForwardedFor.client(peer: "127.0.0.1", header: "6.6.6.6, 203.0.113.9, 10.0.0.2", trusted: trusted) == "203.0.113.9")
        #expect(ForwardedFor.client(peer: "127.0.0.1", header: "10.0.0.2, 127.0.0.1", trusted: trusted) == "10.0.0.2")
        #expect(ForwardedFor.client(peer: "127.0.0.1", header: "2001:db8::1", trusted: trusted) == "2001:db8::1")
        // Garbage stops the walk at the nearest trusted hop.
        #expect(ForwardedFor.client(peer: "127.0.0.1", header: "<script>, 203.0.113.9", trusted: trusted) == "203.0.113.9")
        #expect(ForwardedFor.client(peer: "127.0.0.1", header: "203.0.113.9, evil host", trusted: trusted) == "127.0.0.1")
    }

    @Test func protoAndRequestIDs() {
        #expect(ForwardedFor.proto(peer: "127.0.0.1", header: "https", trusted: trusted) == "https")
        #expect(ForwardedFor.proto(peer: "127.0.0.1", header: "gopher", trusted: trusted) == nil)
        #expect(ForwardedFor.proto(peer: "198.51.100.7", header: "https", trusted: trusted) == nil)
        #expect(ForwardedFor.requestID("abc-123_X") == "abc-123_X")
        #expect(ForwardedFor.requestID("bad id\r\n") == nil)
        #expect(ForwardedFor.requestID(String(repeating: "a", count: 65)) == nil)
    }
}
