import Foundation
import Testing

/// The official Python firebase-admin SDK's Realtime Database API (everything in
/// `firebase_admin.db` except `listen()`, see FirebaseAdminListenTests) against the built
/// binary in emulator mode (docs/protocol/admin-client.md §1–§4, §6). The SDK is driven by
/// `Python/admin_database.py`, run with `$HEARTH_PYTHON` (set by scripts/test.sh). Each test
/// runs one group of the driver's named checks against its own server; each check is
/// asserted on its own so a failure names the SDK call, what came back and what Firebase
/// would have returned.
@Suite struct FirebaseAdminDatabaseTests {
    let dir = TemporaryDirectory()

    /// Open rules with the indexes the driver's queries need (`/unindexed` has none).
    static let indexedRules = #"""
        {"rules": {".read": true, ".write": true,
                   "dinos": {".indexOn": ["height", "w/kg", ".value"]},
                   "scores": {".indexOn": ".value"}}}
        """#

    /// Each user may read and write only `/users/<own uid>`; `/public` is readable by anyone.
    static let perUserRules = #"""
        {"rules": {"users": {"$uid": {".read": "auth != null && auth.uid === $uid",
                                      ".write": "auth != null && auth.uid === $uid"}},
                   "public": {".read": true}}}
        """#

    /// get, get(shallow=True), get(etag=True), get_if_changed unchanged (304) and changed
    /// (200 with the new ETag).
    @Test func reads() throws {
        try expectPassing(group: "reads", [
            "get", "get_missing_is_none", "get_leaf", "get_shallow", "get_shallow_leaf", "get_etag",
            "get_etag_missing_node", "get_if_changed_unchanged", "get_if_changed_changed",
        ])
    }

    /// set, set_if_unchanged (success, 412 → (False, value, etag), on a missing node), push with
    /// and without a value, multi-path update with slash keys and None, delete.
    @Test func writes() throws {
        try expectPassing(group: "writes", [
            "set_object", "set_primitives", "set_list", "set_empty_object_deletes",
            "set_if_unchanged_success", "set_if_unchanged_failure", "set_if_unchanged_missing_node",
            "push_with_value", "push_without_value", "update_multi_path", "update_deep_slash_keys", "delete",
        ])
    }

    /// 4 threads × 10 `transaction()` increments of one counter end at exactly 40 (the SDK
    /// retries from the 412's body and ETag); a transaction on a missing node starts from None;
    /// an exception in the update function aborts without writing.
    @Test func transactions() throws {
        try expectPassing(group: "transaction", [
            "transaction_contention", "transaction_result_and_missing_node", "transaction_abort_by_exception",
            "transaction_on_a_tag_beginning_w_slash",
        ])
    }

    /// `{".sv": "timestamp"}` and `{".sv": {"increment": n}}` through set, update and push
    /// (firebase_admin has no ServerValue helper; the placeholders are plain dicts).
    @Test func serverValues() throws {
        try expectPassing(group: "server-values", [
            "sv_timestamp", "sv_increment_set_twice", "sv_increment_in_update", "sv_timestamp_in_push",
        ])
    }

    /// Every Query form the SDK sends (docs/protocol/admin-client.md §3) on a fixed
    /// dataset, with the children Firebase would return worked out by hand; child and value
    /// orders without `.indexOn` raise InvalidArgumentError with Firebase's message, `$key`
    /// needs no index.
    @Test func queries() throws {
        try expectPassing(group: "queries", [
            "child_limit_to_first", "child_limit_to_last", "child_start_at_end_at", "child_start_at",
            "child_end_at", "child_end_at_limit_to_last", "child_start_at_limit_to_first",
            "child_start_at_true", "child_equal_to_string", "child_equal_to_number", "child_equal_to_true",
            "child_start_at_string", "nested_child_limit_to_last", "nested_child_start_at_end_at",
            "nested_child_end_at_limit_to_last", "key_start_at_end_at", "key_limit_to_first",
            "key_limit_to_last", "key_equal_to", "key_without_index", "value_equal_to", "value_limit_to_last",
            "value_start_at_limit_to_first", "value_start_at_end_at", "value_of_objects_limit_to_first",
            "query_missing_location", "child_query_without_index", "value_query_without_index",
        ])
    }

    /// `databaseAuthVariableOverride`: `{"uid": "worker-1"}` reaches only its own path (other
    /// paths raise UnauthenticatedError 'Permission denied'), `None` is unauthenticated; the
    /// app without the option stays admin.
    @Test func authVariableOverride() throws {
        try expectPassing(group: "override", rules: Self.perUserRules, [
            "override_admin_reads_everything", "override_own_path_read", "override_own_path_write",
            "override_own_path_transaction", "override_other_path_read_denied",
            "override_other_path_write_denied", "override_root_read_denied", "override_query_denied",
            "override_none_public_read", "override_none_read_denied", "override_none_write_denied",
        ])
    }

    /// Priorities: `{".value": v, ".priority": p}` and `.priority` beside children are stored;
    /// a plain read shows the value without them (format=export shows them, QueryTests).
    @Test func priorities() throws {
        try expectPassing(group: "priorities", ["priority_set", "priority_on_object"])
    }

    // MARK: - Helpers

    /// One named check as the driver printed it.
    struct Check {
        var ok: Bool
        var details: String
    }

    /// Runs `group` and expects each of `names` to have run and passed.
    func expectPassing(group: String, rules: String = indexedRules, _ names: [String]) throws {
        let run = try runChecks(group: group, rules: rules, expecting: names)
        for name in names {
            guard let check = run.checks[name] else { continue }  // already reported by runChecks
            let passed = check.ok
            #expect(passed, "\(group)/\(name) failed: \(check.details)\n\(run.stderr)")
        }
    }

    /// Starts `hearth serve --accept-emulator-owner` with `rules`, runs the driver's `group`
    /// against it and returns its checks by name (and its stderr: tracebacks), after expecting
    /// that exactly `names` ran and that the driver and the server both exited cleanly.
    func runChecks(group: String, rules: String, expecting names: [String]) throws -> (checks: [String: Check], stderr: String) {
        let python = try pythonInterpreter()
        let server = try HearthProcess(
            arguments: ["serve", "--port", "0", "--data-dir", dir.path,
                        "--rules", try HearthProcess.writeRules(rules, in: dir.path), "--accept-emulator-owner",
                        // The driver's databaseURL names demo-proj's default database.
                        "--project-id", "demo-proj"],
            dataDirectory: dir.path)
        try server.waitUntilListening()

        let result = try runDriver(python, group, port: server.port, script: "admin_database.py")
        #expect(result.status == 0, "driver failed (\(result.status)): \(result.stderr)")
        var checks: [String: Check] = [:]
        for line in result.stdout.split(separator: "\n") {
            guard let object = (try? JSONSerialization.jsonObject(with: Data(line.utf8))) as? [String: Any],
                  let name = object["name"] as? String, let ok = object["ok"] as? Bool else {
                Issue.record("unexpected driver output line: \(line)")
                continue
            }
            let details = object["details"].flatMap {
                try? JSONSerialization.data(withJSONObject: $0, options: [.sortedKeys, .fragmentsAllowed, .withoutEscapingSlashes])
            }
            checks[name] = Check(ok: ok, details: details.map { String(decoding: $0, as: UTF8.self) } ?? "")
        }
        for name in names where checks[name] == nil {
            Issue.record("check \(group)/\(name) did not run; driver output:\n\(result.stdout)\n\(result.stderr)")
        }
        #expect(Set(checks.keys).subtracting(names).isEmpty, "checks this test does not know: \(checks.keys.sorted())")

        server.signal(SIGTERM)
        #expect(try server.waitForExit() == 0, "server log:\n\(server.log)")
        return (checks, result.stderr)
    }
}
