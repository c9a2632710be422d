import HearthAccounts
import HearthHTTP
import HearthServer
import HearthTesting
import Testing

/// `--accept-emulator-owner`: the `owner` token and unsigned custom
/// tokens are honoured only on requests straight from this machine. A proxy on the same
/// host connects from 127.0.0.1 too, so a forwarded request (X-Forwarded-For, Forwarded,
/// X-Real-IP, ...) is some outside client's and is refused them, on REST, the rules
/// settings, the account admin API and the wire protocol alike.
@Suite struct LocalOnlyCredentialsLiveTests {
    static let rules = #"{"rules": {"open": {".read": true, ".write": true}}}"#
    static let owner = ("Authorization", "Bearer owner")

    @Test(arguments: ["X-Forwarded-For", "Forwarded", "X-Real-IP", "X-Forwarded-Host", "X-Forwarded-Proto"])
    func ownerThroughAProxyIsNoAdmin(header: String) async throws {
        let server = try LiveServer(rules: Self.rules) { $0.auth.acceptEmulatorOwner = true }
        let forwarded = (header, header == "Forwarded" ? "for=203.0.113.9" : "203.0.113.9")
        // Straight from this machine: an admin (the rules deny /closed to everyone else).
        #expect(try server.request("PUT", "/closed/x.json", "1", headers: [Self.owner]).status == 200)
        #expect(try server.request("GET", "/closed/x.json?auth=owner").status == 200)
        // Forwarded: refused as an invalid token, in the header or in ?auth=.
        let viaHeader = try server.request("PUT", "/closed/x.json", "2", headers: [Self.owner, forwarded])
        #expect(viaHeader.status == 401)
        #expect(try server.request("GET", "/closed/x.json?auth=owner", headers: [forwarded]).status == 401)
        // An ordinary request through the proxy is judged by the rules as before.
        #expect(try server.request("PUT", "/open/x.json", "3", headers: [forwarded]).status == 200)
        // The rules settings and the account admin API refuse it too.
        #expect(try server.request("GET", "/.settings/rules.json", headers: [Self.owner]).status == 200)
        #expect(try server.request("GET", "/.settings/rules.json", headers: [Self.owner, forwarded]).status == 401)
        let lookup = "/identitytoolkit.googleapis.com/v1/projects/hearth/accounts:lookup"
        #expect(try server.request("POST", lookup, #"{"localId":["nobody"]}"#, headers: [Self.owner]).status == 200)
        let refused = try server.request("POST", lookup, #"{"localId":["nobody"]}"#, headers: [Self.owner, forwarded])
        #expect(refused.status == 401 && refused.body.contains("INSUFFICIENT_PERMISSION"))
        #expect(try server.request("GET", "/closed/x.json?auth=owner").body == "1", "nothing forwarded was written")
        await server.stop()
    }

    /// `owner` over `/.ws`: refused through a proxy and from a page of another origin (the
    /// upgrade's `Origin`); straight from this machine and from a loopback page, an admin.
    @Test func ownerOnAWireConnectionThroughAProxyIsRefused() async throws {
        let server = try LiveServer(rules: Self.rules) { $0.auth.acceptEmulatorOwner = true }
        let result = try WireLiveTests.client("owner_only_direct", port: server.port)
        await server.stop()
        #expect(result.status == 0, "\(result.output)")
        #expect(result.output.hasSuffix("done\n"))
    }

    /// An unsigned custom token (firebase-admin's in emulator mode) through a proxy on this
    /// host is refused like one from another machine.
    @Test func anUnsignedCustomTokenThroughAProxyIsRefused() async throws {
        var emulator = AuthSettings()
        emulator.acceptEmulatorOwner = true
        let h = try RouterHarness(settings: emulator)
        #expect(await UnsignedCustomTokenTests.signIn(h, from: "127.0.0.1").status == 200)
        var request = HTTPRequest(method: "POST", target: "/identitytoolkit.googleapis.com/v1/accounts:signInWithCustomToken",
                                  body: Array(#"{"token":"\#(UnsignedCustomTokenTests.unsigned(uid: "emu"))","returnSecureToken":true}"#.utf8),
                                  remoteAddress: "127.0.0.1")
        request.headers.add("X-Forwarded-For", "203.0.113.5")
        let forwarded = request
        let response = await withCheckedContinuation { continuation in
            h.router.handle(forwarded, responder: HTTPResponder { continuation.resume(returning: $0) })
        }
        #expect(response.status == 400)
    }
}
