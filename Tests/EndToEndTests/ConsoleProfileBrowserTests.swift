import Foundation
import Testing

/// The console's Profile screen in headless Chromium (`Python/console_profile_browser.py`,
/// as ConsoleBrowserTests drives the other screens) against the built binary: a window
/// started from the screen records writes and an unindexed query made meanwhile, shown
/// in its tables after Stop; a second window while one records is refused with the
/// server's reason.
@Suite struct ConsoleProfileBrowserTests {
    static let rules = #"{"rules": {".read": true, ".write": true, "cities": {"$city": {".validate": "newData.hasChildren()"}}}}"#

    @Test func theProfileScreenInChromium() throws {
        let python = try pythonInterpreter()
        let dir = TemporaryDirectory(), profile = TemporaryDirectory()
        let server = try HearthProcess.serve(dataDirectory: dir.path, rules: Self.rules)
        #expect(try run(HearthProcess.binaryPath, ["admins", "add", "--email", "ops@example.com", "--data-dir", dir.path],
                        input: "a long admin password\n").status == 0)
        let admin = try run(HearthProcess.binaryPath, ["token", "--admin", "--data-dir", dir.path]).output.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(try curl("PUT", server.baseURL + "/motd.json", body: #""hello""#).status == 200)
        let result = try runPythonDriver(python, script: "console_profile_browser.py",
                                         arguments: [server.baseURL, "ops@example.com", "a long admin password", admin, profile.path],
                                         environment: [:])
        for name in ["profile_screen_opens", "window_records_while_requests_run", "report_tables_after_stop",
                     "a_second_window_is_refused_clearly"] {
            #expect(result.stdout.contains(#""name": "\#(name)", "ok": true"#), "\(name): \(result.stdout)\n\(result.stderr.suffix(2000))")
        }
        #expect(result.status == 0 && result.stdout.hasSuffix("done\n"))
    }
}
