import Foundation
import Testing

/// The admin console in a real browser: headless Chromium through
/// chromium-driver and selenium (`Python/console_browser.py`) against the built binary:
/// sign in (a wrong password announced first), the Data screen with leaf values, lazy
/// browsing, keys and values with U+202E isolated (the controls after them in order) and a
/// very long key wrapped within the panel, an edit seen through REST, a bad JSON refused
/// before sending, a REST write appearing without a reload, a half-typed new key and an
/// open edit kept through a live change (with the focus), a redrawn leaf's button keeping
/// the focus, an edit cancelled by its button and by Escape, add and delete (a larger node
/// only after a confirmation), export and import of a subtree; the Rules screen
/// (highlighted, a broken file's error with its line before saving, save, history) and the
/// simulator's trace; the Users screen (search, details, disabling a user whose next
/// request is refused, custom claims, a reset without SMTP refused clearly, a failed lookup
/// leaving no user's buttons, a uid with `/` opened, disabled, enabled, revoked, deleted);
/// the Health screen's charts from the `/metrics` counters; the Triggers screen (a dead
/// letter listed without the trigger's secrets, resent and then delivered; the focus kept on
/// a button through the screen's refresh); the security headers and a
/// request without the CSRF token refused, from the page; a session ended on the server
/// sends the page back to sign-in; sign-out.
@Suite struct ConsoleBrowserTests {
    static let checks = [
        "sign_in_form", "wrong_password_announced", "sign_in_opens_data_with_leaf_values", "browse_lazily",
        "bidi_isolated_and_long_keys_wrap", "invalid_json_is_refused_before_sending", "edit_seen_through_rest", "rest_write_appears_without_reload",
        "typing_survives_live_changes", "edit_cancelled", "leaf_button_keeps_focus", "add_and_delete", "large_delete_is_confirmed", "export_json", "rules_shown_highlighted", "broken_rules_show_their_line_and_are_not_saved",
        "rules_saved_and_in_history", "simulator_with_trace", "users_search_and_details", "disabled_user_is_refused",
        "claims_and_reset_without_smtp", "failed_lookup_clears_the_panel", "slash_uid_managed_from_the_console",
        "health_charts_from_metrics", "triggers_dead_letter_resent", "triggers_oldest_event_parked",
        "triggers_refresh_keeps_the_focus", "security_headers_and_csrf_refusal", "import_json",
        "ended_session_returns_to_sign_in", "sign_out",
    ]

    @Test func theDataScreenInChromium() throws {
        let python = try pythonInterpreter()
        let dir = TemporaryDirectory(), profile = TemporaryDirectory()
        // A trigger on /motd whose receiver refuses the seed's event (retry false): one dead letter.
        let receiver = try TriggerReceiver(answers: [500])
        defer { receiver.stop() }
        let secrets = ["Bearer console-header-secret", "console-hmac-secret-0123"]
        let triggers = dir.path + "/triggers.json"
        // And one retried to a port nobody listens on: its event stays pending until parked.
        let refusing = try RefusingPort()  // refusing to the end
        defer { refusing.release() }
        try """
            {"triggers": [{"name": "motd_written", "event": "written", "ref": "/motd", "url": "http://127.0.0.1:\(receiver.port)/motd-receiver",
              "headers": {"Authorization": "\(secrets[0])"}, "hmacSecret": "\(secrets[1])"},
              {"name": "motd_parked", "event": "written", "ref": "/motd", "url": "http://127.0.0.1:\(refusing.port)/", "retry": true}]}
            """.write(toFile: triggers, atomically: true, encoding: .utf8)
        // No user-status cache: a user disabled in the console is refused at the next request.
        let server = try HearthProcess.serve(dataDirectory: dir.path, environment: ["HEARTH_USER_STATUS_CACHE_SECONDS": "0",
                                                                                    "HEARTH_TRIGGERS": triggers])
        #expect(try run(HearthProcess.binaryPath, ["admins", "add", "--email", "ops@example.com", "--data-dir", dir.path],
                        input: "a long admin password\n").status == 0)
        let admin = try run(HearthProcess.binaryPath, ["token", "--admin", "--data-dir", dir.path]).output.trimmingCharacters(in: .whitespacesAndNewlines)
        // Under bidi: a key and a value with U+202E (right-to-left override), a 400-character key.
        let bidi = #""bidi":{"k\u202eey":"va\u202elue","\#(String(repeating: "w", count: 400))":1}"#
        let seeded = try curl("PUT", server.baseURL + "/.json?auth=\(admin)",
                              body: #"{"motd":"hello","cities":{"oslo":{"name":"Oslo","temp":3}},\#(bidi)}"#)
        #expect(seeded.status == 200)
        let ann = try curl("POST", server.baseURL + "/v1/accounts:signUp", body: #"{"email":"ann@example.com","password":"secret1","returnSecureToken":true}"#,
                           headers: ["Content-Type: application/json"])
        let annToken = try #require((json(ann.body) as? [String: Any])?["idToken"] as? String)
        let store = try TriggersOperatorEndToEndTests.storeArguments(dir.path)
        try waitUntil("the dead letter") { try runHearth(["triggers", "dead"] + store).output.contains("motd_written") }
        let result = try runPythonDriver(python, script: "console_browser.py",
                                         arguments: [server.baseURL, "ops@example.com", "a long admin password", admin, profile.path, annToken],
                                         environment: ["CONSOLE_TRIGGER_SECRETS": secrets.joined(separator: ",")])
        var seen: [String: (Bool, String)] = [:]
        for line in result.stdout.split(separator: "\n") {
            guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                  let name = object["name"] as? String, let ok = object["ok"] as? Bool else { continue }
            seen[name] = (ok, String(line))
        }
        for name in Self.checks {
            #expect(seen[name]?.0 == true, "\(name): \(seen[name]?.1 ?? "no line")\nstderr: \(result.stderr.suffix(2000))")
        }
        #expect(result.status == 0 && result.stdout.hasSuffix("done\n"), "\(result.stdout)\n\(result.stderr.suffix(2000))")
        // The resent event was delivered (the same event: the same id as the refused attempt).
        try waitUntil("the resent event") { receiver.received.filter { $0.header("ce-subject") == "refs/motd" }.count >= 2 }
        let ids = receiver.received.filter { $0.header("ce-subject") == "refs/motd" }.prefix(2).compactMap { $0.header("ce-id") }
        #expect(ids.count == 2 && ids[0] == ids[1])
    }

    /// Session expiry in the browser: with `HEARTH_CONSOLE_IDLE_SECONDS=2` the page, left
    /// unused for longer, is sent back to sign-in at its next request. (The idle and
    /// absolute limits themselves are crossed on an injected clock in ConsoleSessionTests.)
    @Test func anIdleSessionExpiresInTheBrowser() throws {
        let python = try pythonInterpreter()
        let dir = TemporaryDirectory(), profile = TemporaryDirectory()
        let server = try HearthProcess.serve(dataDirectory: dir.path, environment: ["HEARTH_CONSOLE_IDLE_SECONDS": "2"])
        #expect(try run(HearthProcess.binaryPath, ["admins", "add", "--email", "ops@example.com", "--data-dir", dir.path],
                        input: "a long admin password\n").status == 0)
        let admin = try run(HearthProcess.binaryPath, ["token", "--admin", "--data-dir", dir.path]).output.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(try curl("PUT", server.baseURL + "/.json?auth=\(admin)", body: #"{"motd":"hello"}"#).status == 200)
        let result = try runPythonDriver(python, script: "console_browser.py",
                                         arguments: [server.baseURL, "ops@example.com", "a long admin password", admin, profile.path, ""],
                                         environment: ["CONSOLE_MODE": "expiry"])
        #expect(result.stdout.contains(#""name": "idle_session_expires", "ok": true"#), "\(result.stdout)\n\(result.stderr.suffix(2000))")
        #expect(result.status == 0 && result.stdout.hasSuffix("done\n"))
    }

    /// The namespace picker: absent on a server with the default only; on one with a
    /// namespaces file it lists the default first, and picking `env-b` shows env-b's data
    /// and rules (titles naming it), picking the default again the default's.
    @Test func thePickerShowsTheChosenNamespace() throws {
        let python = try pythonInterpreter()
        let single = TemporaryDirectory(), multi = TemporaryDirectory(), profile = TemporaryDirectory()
        let rulesB = #"{"rules": {".read": true, ".write": true, "marker-b": {".read": false}}}"#
        try rulesB.write(toFile: multi.path + "/b.json", atomically: true, encoding: .utf8)
        try #"{"namespaces": {"env-b": {"rules": "b.json"}}}"#.write(toFile: multi.path + "/namespaces.json", atomically: true, encoding: .utf8)
        var servers: [HearthProcess] = []
        for (dir, environment) in [(single, [:]), (multi, ["HEARTH_NAMESPACES_FILE": multi.path + "/namespaces.json"])] {
            let server = try HearthProcess.serve(dataDirectory: dir.path, environment: environment)
            #expect(try run(HearthProcess.binaryPath, ["admins", "add", "--email", "ops@example.com", "--data-dir", dir.path],
                            input: "a long admin password\n").status == 0)
            #expect(try curl("PUT", server.baseURL + "/motd.json", body: #""hello""#).status == 200)
            servers.append(server)
        }
        #expect(try curl("PUT", servers[1].baseURL + "/.json?ns=env-b", body: #"{"motd": "from b", "onlyb": 1}"#).status == 200)
        let result = try runPythonDriver(python, script: "console_namespaces_browser.py",
                                         arguments: [servers[0].baseURL, servers[1].baseURL, "ops@example.com", "a long admin password", profile.path],
                                         environment: [:])
        for name in ["single_namespace_has_no_picker", "picker_lists_namespaces_default_first", "picking_env_b_shows_its_data",
                     "rules_screen_shows_env_b_rules", "back_to_the_default"] {
            #expect(result.stdout.contains(#""name": "\#(name)", "ok": true"#), "\(name): \(result.stdout)\n\(result.stderr.suffix(2000))")
        }
        #expect(result.status == 0 && result.stdout.hasSuffix("done\n"))
    }
}
