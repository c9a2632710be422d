import Foundation
import HearthJSON
import Testing

/// Whether the admin console is served, with the built binary: the start-up log says so and
/// names the setting that decided it; off, `/console/` answers 404 saying why and how to
/// turn it on (the shipped systemd unit sets `HEARTH_TRUSTED_PROXIES`, which turns `auto`
/// off), while `.json` paths under `/console` stay database locations.
@Suite struct ConsoleSwitchEndToEndTests {
    let dir = TemporaryDirectory()

    static let console = "HEARTH_CONSOLE (config key consoleEnabled)"
    static let proxies = "HEARTH_TRUSTED_PROXIES (config key trustedProxies)"

    @Test(arguments: [
        ([:], "admin console on at /console/: \(console) is auto and \(proxies) is not set", true),
        (["HEARTH_TRUSTED_PROXIES": "127.0.0.1"],
         "admin console off: \(console) is auto and \(proxies) is set, so Hearth is taken to be behind a proxy; "
            + "set HEARTH_CONSOLE=on (config key consoleEnabled: \"on\") and restart to serve it at /console/ through the proxy", false),
        (["HEARTH_CONSOLE": "off"], "admin console off: \(console) is off; set HEARTH_CONSOLE=on", false),
        (["HEARTH_CONSOLE": "on", "HEARTH_TRUSTED_PROXIES": "127.0.0.1"], "admin console on at /console/: \(console) is on", true),
    ])
    func theStartUpLineSaysWhetherAndWhy(environment: [String: String], line: String, on: Bool) throws {
        let rules = try HearthProcess.writeRules(HearthProcess.openRules, in: dir.path)
        let server = try HearthProcess(arguments: ["serve", "--port", "0", "--data-dir", dir.path + "/data", "--rules", rules],
                                       dataDirectory: dir.path + "/data", environment: environment)
        try server.waitUntilListening()
        #expect(server.log.contains(line), "\(server.log)")
        #expect(server.log.components(separatedBy: "admin console o").count == 2, "one line: \(server.log)")
        // The proxies' addresses are not repeated.
        #expect(!server.log.contains("admin console off: 127.0.0.1") && !server.log.contains("is set (127.0.0.1"), "\(server.log)")

        #expect(try curl("PUT", server.baseURL + "/console.json", body: #"{"notes":"kept"}"#).status == 200)
        let page = try curl("GET", server.baseURL + "/console/")
        if on {
            #expect(page.status == 200 && page.body.contains("<html"), "\(page.status) \(page.body)")
        } else {
            #expect(page.status == 404, "\(page.status) \(page.body)")
            let error = try JSONParser.parse(Array(page.body.utf8)).objectValue?["error"]?.stringValue ?? ""
            #expect(error.hasPrefix("the admin console is off: "), "\(page.body)")
            #expect(error.contains("set HEARTH_CONSOLE=on"), "\(page.body)")
            #expect(!error.contains("127.0.0.1"), "\(page.body)")
        }
        // `/console.json` is the database's either way; below it, a `.json` path is the
        // database's while the console is off, the console's (no such file) while it is on.
        let stored = try curl("GET", server.baseURL + "/console.json")
        #expect(stored.status == 200 && stored.body == #"{"notes":"kept"}"#, "\(stored.status) \(stored.body)")
        let child = try curl("GET", server.baseURL + "/console/notes.json")
        #expect(on ? child.status == 404 && child.body.contains("no such console file") : child.status == 200 && child.body == #""kept""#,
                "\(child.status) \(child.body)")
        server.signal(SIGTERM)
        #expect(try server.waitForExit() == 0)
    }
}

/// The console behind the real nginx, as docs/console.md says to serve it: the shipped site
/// with the document's `location /console/` block added as written, Hearth with the
/// systemd unit's `HEARTH_TRUSTED_PROXIES` and `HEARTH_CONSOLE=on`.
@Suite struct ConsoleBehindNginxEndToEndTests {
    let dir = TemporaryDirectory()

    /// The `nginx` block of the document's "Behind nginx" section, as written.
    static func documentedBlock() throws -> String {
        let path = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("docs/console.md").path
        let text = try String(contentsOfFile: path, encoding: .utf8)
        let section = try #require(text.range(of: "### Behind nginx"), "docs/console.md has no Behind nginx section")
        let rest = text[section.upperBound...]
        let start = try #require(rest.range(of: "```nginx\n"), "no nginx block")
        let end = try #require(rest[start.upperBound...].range(of: "```"), "unterminated nginx block")
        return String(rest[start.upperBound..<end.lowerBound])
    }

    /// The shipped site with `block` placed before its `location / {`.
    static func site(with block: String) throws -> String {
        let shipped = try String(contentsOfFile: NginxProcess.siteFile, encoding: .utf8)
        let anchor = "    location / {"
        try #require(shipped.components(separatedBy: anchor).count == 2, "the shipped site has one `location / {`")
        return shipped.replacingOccurrences(of: anchor, with: block + "\n" + anchor)
    }

    @Test func theDocumentedBlockServesTheConsoleToTheAllowedAddressesOnly() throws {
        let hearth = try HearthProcess.serve(dataDirectory: dir.path,
                                             environment: ["HEARTH_TRUSTED_PROXIES": "127.0.0.1", "HEARTH_CONSOLE": "on"])
        #expect(hearth.log.contains("admin console on at /console/: HEARTH_CONSOLE (config key consoleEnabled) is on"), "\(hearth.log)")
        let block = try Self.documentedBlock()
        #expect(block.contains("location /console/ {") && block.contains("allow 203.0.113.0/24;") && block.contains("deny all;"))

        // As written: the administrators' network only; this test's client (127.0.0.1) is not in it.
        let written = try NginxProcess.start(in: dir.path + "/nginx-written", upstreamPort: hearth.port, siteText: try Self.site(with: block))
        #expect(try curl("GET", written.baseURL + "/console/").status == 403)
        #expect(try curl("GET", written.baseURL + "/console/api/session").status == 403)
        #expect(try curl("GET", written.baseURL + "/healthz").status == 200)
        try written.stop()

        // With this machine's address allowed, the page and the API pass, with the client's
        // address forwarded (a wrong sign-in is the console's own answer).
        let allowedBlock = block.replacingOccurrences(of: "allow 203.0.113.0/24;", with: "allow 127.0.0.1;")
        let allowed = try NginxProcess.start(in: dir.path + "/nginx-allowed", upstreamPort: hearth.port, siteText: try Self.site(with: allowedBlock))
        let page = try curl("GET", allowed.baseURL + "/console/")
        #expect(page.status == 200 && page.body.contains("<html"), "\(page.status) \(page.body.prefix(200))")
        let signIn = try curl("POST", allowed.baseURL + "/console/api/session", body: #"{"email":"a@example.com","password":"not the one"}"#,
                              headers: ["Content-Type: application/json"])
        #expect(signIn.status == 400 && signIn.body.contains("wrong email or password"), "\(signIn.status) \(signIn.body)")
        try allowed.stop()
        hearth.signal(SIGTERM)
        #expect(try hearth.waitForExit() == 0)
    }

    /// The systemd unit's settings alone: through the shipped site `/console/` is the 404
    /// naming the setting, not the database's `null`.
    @Test func offBehindTheShippedSiteTheConsoleSaysWhy() throws {
        let hearth = try HearthProcess.serve(dataDirectory: dir.path, environment: ["HEARTH_TRUSTED_PROXIES": "127.0.0.1"])
        let nginx = try NginxProcess.start(in: dir.path + "/nginx", upstreamPort: hearth.port)
        let page = try curl("GET", nginx.baseURL + "/console/")
        #expect(page.status == 404 && page.body.contains("the admin console is off") && page.body.contains("set HEARTH_CONSOLE=on"),
                "\(page.status) \(page.body)")
        try nginx.stop()
        hearth.signal(SIGTERM)
        #expect(try hearth.waitForExit() == 0)
    }
}
