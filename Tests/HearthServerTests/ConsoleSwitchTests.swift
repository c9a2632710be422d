import HearthJSON
import HearthTesting
import Testing
@testable import HearthServer

/// Whether the admin console is on and which setting decided it (`ConsoleSwitch`), and the
/// 404 `/console/` answers while it is off (never a database read).
@Suite struct ConsoleSwitchTests {
    static let console = "HEARTH_CONSOLE (config key consoleEnabled)"
    static let proxies = "HEARTH_TRUSTED_PROXIES (config key trustedProxies)"

    @Test func eachSettingDecidesWithItsReason() {
        let cases: [(String, [String], ConsoleSwitch.Reason, Bool)] = [
            ("auto", [], .autoDirect, true), ("auto", ["10.0.0.1"], .autoBehindProxy, false),
            ("on", ["10.0.0.1"], .setOn, true), ("on", [], .setOn, true),
            ("off", [], .setOff, false), ("off", ["10.0.0.1"], .setOff, false), ("sometimes", [], .setOff, false),
        ]
        for (console, proxies, reason, on) in cases {
            let decision = ConsoleSwitch(console: console, trustedProxies: proxies)
            #expect(decision.reason == reason && decision.isOn == on, "\(console) \(proxies)")
            var configuration = HearthConfiguration()
            (configuration.console, configuration.trustedProxies) = (console, proxies)
            #expect(configuration.consoleEnabled == on)
        }
    }

    @Test func theLinesNameTheSettingsNotTheirValues() {
        let direct = ConsoleSwitch(console: "auto", trustedProxies: [])
        #expect(direct.logLine == "admin console on at /console/: \(Self.console) is auto and \(Self.proxies) is not set")
        let behind = ConsoleSwitch(console: "auto", trustedProxies: ["10.9.8.7"])
        #expect(behind.logLine == "admin console off: \(Self.console) is auto and \(Self.proxies) is set, so Hearth is taken to be "
                + "behind a proxy; set HEARTH_CONSOLE=on (config key consoleEnabled: \"on\") and restart to serve it at /console/ "
                + "through the proxy (docs/console.md)")
        #expect(behind.offMessage.hasPrefix("the admin console is off: \(Self.console) is auto and \(Self.proxies) is set"))
        #expect(!behind.offMessage.contains("10.9.8.7") && !behind.logLine.contains("10.9.8.7"))
        let off = ConsoleSwitch(console: "off", trustedProxies: [])
        #expect(off.logLine == "admin console off: \(Self.console) is off; set HEARTH_CONSOLE=on (config key consoleEnabled: \"on\") "
                + "and restart to serve it at /console/ (docs/console.md)")
        #expect(ConsoleSwitch(console: "on", trustedProxies: ["10.9.8.7"]).logLine == "admin console on at /console/: \(Self.console) is on")
        // The names quoted are the settings table's.
        #expect(ServeSettings.all.contains { $0.key == "consoleEnabled" && $0.environment == "HEARTH_CONSOLE" })
        #expect(ServeSettings.all.contains { $0.key == "trustedProxies" && $0.environment == "HEARTH_TRUSTED_PROXIES" })
    }

    /// Behind a proxy with `auto` (the shipped systemd unit's settings): every console path
    /// answers 404 with the reason, whatever the method and namespace, and data stored at
    /// `console` is not what comes back; `.json` paths are the database's.
    @Test(arguments: [["HEARTH_TRUSTED_PROXIES"], ["HEARTH_CONSOLE"]])
    func offTheConsolePathsAnswer404WithTheReason(setting: [String]) async throws {
        let server = try LiveServer {
            if setting == ["HEARTH_CONSOLE"] { $0.console = "off" } else { $0.trustedProxies = ["10.0.0.1"] }
        }
        defer { Task { await server.stop() } }
        let expected = ConsoleSwitch(console: setting == ["HEARTH_CONSOLE"] ? "off" : "auto",
                                     trustedProxies: setting == ["HEARTH_CONSOLE"] ? [] : ["10.0.0.1"]).offMessage
        #expect(try server.request("PUT", "/console.json", #"{"api": {"session": "from-the-db"}, "x": "from-the-db"}"#).status == 200)
        for (method, target) in [("GET", "/console/"), ("GET", "/console"), ("GET", "/console/x"), ("GET", "/console/app.js"),
                                 ("POST", "/console/api/session"), ("GET", "/console/api/session"), ("DELETE", "/console/x"),
                                 ("GET", "/console/?ns=other"), ("OPTIONS", "/console/")] {
            let (head, body) = try server.exchange(method, target, method == "POST" ? "{}" : nil)
            #expect(head.status == 404, "\(method) \(target): \(head.status) \(body)")
            let error = try JSONParser.parse(Array(body.utf8)).objectValue?["error"]?.stringValue
            #expect(error == expected, "\(method) \(target): \(body)")
            #expect(head.header("Content-Type")?.hasPrefix("application/json") == true)
            #expect(!body.contains("from-the-db"))
        }
        // The database's own paths under `console`: with the suffix, as for every fixed route.
        #expect(try server.request("GET", "/console.json").body == #"{"api":{"session":"from-the-db"},"x":"from-the-db"}"#)
        #expect(try server.request("GET", "/console/x.json").body == #""from-the-db""#)
        #expect(try server.request("PUT", "/console/y.json", "2").status == 200)
        #expect(try server.request("GET", "/console/api/session.json").body == #""from-the-db""#)
        #expect(try server.request("GET", "/console.json?shallow=true").body == #"{"api":true,"x":true,"y":true}"#)
    }

    /// On, the same paths are the console's (its page, its API's refusal without a session).
    @Test func onTheConsolePathsAreTheConsoles() async throws {
        let server = try LiveServer { $0.console = "on"; $0.trustedProxies = ["10.0.0.1"] }
        defer { Task { await server.stop() } }
        let page = try server.exchange("GET", "/console/")
        #expect(page.head.status == 200 && page.body.contains("<html"), "\(page.head.status)")
        #expect(try server.request("GET", "/console/api/session").status == 401)
    }
}
