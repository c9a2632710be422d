import HearthServer
import HearthTesting
import Testing

/// Emulator mode (`--accept-emulator-owner`) against a live server: `Bearer owner` is an
/// admin for a client on this machine (a Node process sends no `Origin`; a loopback page
/// does), and refused to a web page of another origin and through any proxy. Every JSON
/// answer says `X-Content-Type-Options: nosniff`.
@Suite struct EmulatorOriginLiveTests {
    static let rules = #"{"rules": {".read": false, ".write": false}}"#
    static let owner = ("Authorization", "Bearer owner")

    static func emulator() throws -> LiveServer {
        try LiveServer(rules: rules) { $0.auth.acceptEmulatorOwner = true }
    }

    @Test func aPreflightFromAnotherOriginIsNotGrantedAuthorization() async throws {
        let server = try Self.emulator()
        let asked = ("Access-Control-Request-Headers", "authorization,content-type")
        let hostile = try server.exchange("OPTIONS", "/x.json", headers: [("Origin", "https://evil.example"),
                                                                         ("Access-Control-Request-Method", "PUT"), asked])
        #expect(hostile.head.status == 204)
        let granted = hostile.head.header("Access-Control-Allow-Headers")?.lowercased() ?? ""
        #expect(!granted.contains("authorization") && granted.contains("content-type"), "\(granted)")
        let local = try server.exchange("OPTIONS", "/x.json", headers: [("Origin", "http://localhost:3000"),
                                                                       ("Access-Control-Request-Method", "PUT"), asked])
        #expect(local.head.header("Access-Control-Allow-Headers")?.lowercased().contains("authorization") == true)
        #expect(local.head.header("Access-Control-Allow-Origin") == "*")
        await server.stop()
    }

    @Test func ownerFromAPageOfAnotherOriginIsRefused() async throws {
        let server = try Self.emulator()
        for origin in ["https://evil.example", "http://localhost.evil.example", "http://127.0.0.1.nip.io", "null"] {
            let write = try server.request("PUT", "/closed/x.json", "1", headers: [Self.owner, ("Origin", origin)])
            #expect(write.status == 401 && write.body.contains("\"error\""), "\(origin): \(write)")
            let read = try server.request("GET", "/closed/x.json?auth=owner", headers: [("Origin", origin)])
            #expect(read.status == 401 && read.body.contains("\"error\""), "\(origin): \(read)")
            let rules = try server.request("GET", "/.settings/rules.json", headers: [Self.owner, ("Origin", origin)])
            #expect(rules.status == 401 && rules.body.contains("\"error\""), "\(origin): \(rules)")
            let create = try server.request("PUT", "/.settings/rules.json?ns=evil-ns", #"{"rules": {}}"#,
                                            headers: [Self.owner, ("Origin", origin)])
            #expect(create.status == 401, "\(origin): \(create)")
        }
        #expect(try server.request("GET", "/closed/x.json", headers: [Self.owner]).body == "null", "nothing was written")
        await server.stop()
    }

    @Test(arguments: LocalOnlyForwarding.headers)
    func ownerWithAForwardingHeaderIsRefused(header: String) async throws {
        let server = try Self.emulator()
        let value = header == "Forwarded" ? "for=203.0.113.9" : header == "Via" ? "1.1 proxy.example" : "203.0.113.9"
        let write = try server.request("PUT", "/closed/x.json", "1", headers: [Self.owner, (header, value)])
        #expect(write.status == 401 && write.body.contains("\"error\""), "\(header): \(write)")
        #expect(try server.request("GET", "/closed/x.json?auth=owner", headers: [(header, value)]).status == 401)
        #expect(try server.request("GET", "/closed/x.json", headers: [Self.owner]).body == "null")
        await server.stop()
    }

    @Test func ownerFromALoopbackPageOrANodeProcessIsAnAdmin() async throws {
        let server = try Self.emulator()
        // No Origin: a Node process (rules-unit-testing, firebase-admin).
        #expect(try server.request("PUT", "/closed/a.json", "1", headers: [Self.owner]).status == 200)
        for origin in ["http://localhost:3000", "http://127.0.0.1:9000", "https://[::1]:5173"] {
            let write = try server.request("PUT", "/closed/b.json", "2", headers: [Self.owner, ("Origin", origin)])
            #expect(write.status == 200, "\(origin): \(write)")
        }
        #expect(try server.request("GET", "/.settings/rules.json", headers: [Self.owner, ("Origin", "http://localhost:8080")]).status == 200)
        #expect(try server.request("GET", "/closed/b.json", headers: [Self.owner]).body == "2")
        await server.stop()
    }

    @Test func jsonAndLongPollAnswersSayNosniff() async throws {
        let server = try LiveServer(rules: #"{"rules": {".read": true, ".write": true}}"#)
        let answers = [
            try server.exchange("PUT", "/x.json", "1"),
            try server.exchange("GET", "/x.json"),
            try server.exchange("GET", "/x.json?print=silent"),
            try server.exchange("GET", "/x.json?orderBy=nope"),
            try server.exchange("POST", "/v1/accounts:signUp", "{}", headers: [("Content-Type", "application/json")]),
            try server.exchange("GET", "/.lp?start=t&ser=1&cb=7&v=5"),
            try server.exchange("GET", "/.lp?id=nope&pw=nope&ser=2"),
            try server.exchange("OPTIONS", "/x.json", headers: [("Origin", "http://localhost")]),
        ]
        for (index, answer) in answers.enumerated() {
            #expect(answer.head.header("X-Content-Type-Options") == "nosniff", "answer \(index): \(answer.head.status)")
        }
        #expect(answers[5].head.header("Content-Type")?.hasPrefix("application/javascript") == true)
        await server.stop()
    }
}

/// The forwarding headers, for the tests' arguments.
enum LocalOnlyForwarding {
    static let headers = ["Forwarded", "X-Forwarded-For", "X-Real-IP", "Via", "CF-Connecting-IP", "True-Client-IP", "X-Client-IP",
                          "X-Original-Forwarded-For", "X-Forwarded-Host", "Fastly-Client-IP", "X-Cluster-Client-IP", "X-Forwarded-Proto"]
}
