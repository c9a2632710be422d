import HearthServer
import HearthTesting
import Logging
import Synchronization
import Testing

@Suite struct ObservabilityLiveTests {
    @Test func oneAccessLineperRequestWithTheClientThroughTrustedProxiesAndNoSecrets() async throws {
        let logs = CapturedLogs()
        let server = try LiveServer(logger: Logger(label: "t", factory: logs.handler)) { $0.trustedProxies = ["127.0.0.1"] }
        let user = try server.anonymousUser()
        let read = try server.request("GET", "/users/x.json?auth=\(user.token)", headers: [("X-Forwarded-For", "203.0.113.9")])
        _ = try server.request("PUT", "/a.json", #"{"secret":"body-text"}"#, headers: [("X-Request-Id", "trace-42")])
        await server.stop()
        let access = logs.access
        let signUp = access.first { $0["path"] == "/v1/accounts:signUp" }
        #expect(signUp?["method"] == "POST" && signUp?["status"] == "200")
        let get = try #require(access.first { $0["path"] == "/users/x.json" })
        #expect(get["client"] == "203.0.113.9" && get["peer"] == "127.0.0.1" && get["status"] == String(read.status))
        #expect(get["request_id"]?.isEmpty == false && get["bytes"] != nil && get["ms"] != nil)
        #expect(access.first { $0["path"] == "/a.json" }?["request_id"] == "trace-42")
        // Never a token, a password or a body.
        #expect(!logs.all.contains(user.token) && !logs.all.contains("body-text") && !logs.all.contains("auth="))
    }

    @Test func metricsAreServedToLoopbackAndAdminsOnly() async throws {
        let server = try LiveServer { $0.trustedProxies = ["127.0.0.1"]; $0.auth.acceptEmulatorOwner = true }
        _ = try server.request("PUT", "/a.json", "1")
        _ = try server.request("GET", "/a.json")
        let stream = try server.stream("/a.json")
        _ = try stream.nextEvent()
        _ = try server.request("PUT", "/a.json", "2")
        _ = try stream.nextEvent()
        #expect(try server.request("GET", "/a.json").body == "2")  // a miss: the write dropped "1"
        #expect(try server.request("GET", "/a.json").body == "2")  // a hit
        let metrics = try server.request("GET", "/metrics")
        #expect(metrics.status == 200)
        // Each database's series carry its namespace; the default's is `(default)`.
        for line in [#"hearth_http_requests_total{route="db.write",status="200",namespace="(default)"} 2"#,
                     #"hearth_open_streams{namespace="(default)"} 1.0"#,
                     #"hearth_write_batch_size_count{namespace="(default)"} 2"#, #"hearth_stream_events_total{namespace="(default)"} 1"#,
                     #"hearth_commit_duration_seconds_count{namespace="(default)"} 2"#,
                     #"hearth_wal_sync_seconds_count{namespace="(default)"} 2"#,
                     #"hearth_write_queue_seconds_count{namespace="(default)"} 2"#,
                     #"hearth_write_duration_seconds_count{namespace="(default)"} 2"#,
                     #"hearth_http_request_duration_seconds_count{route="db.read",namespace="(default)"} 3"#,
                     #"hearth_read_cache_lookups_total{namespace="(default)",result="hit"} 1"#,
                     #"hearth_read_cache_lookups_total{namespace="(default)",result="miss"} 2"#,
                     #"hearth_read_cache_entries{namespace="(default)"} 1.0"#, "hearth_namespaces 0.0"] {
            #expect(metrics.body.contains(line), "\(line)")
        }
        // A client behind the trusted proxy is not loopback: admins only.
        let outside = [("X-Forwarded-For", "203.0.113.9")]
        #expect(try server.request("GET", "/metrics", headers: outside).status == 401)
        // The emulator's `owner` is no admin through a proxy (LocalOnlyCredentials): a
        // forwarded request is not from this machine.
        #expect(try server.request("GET", "/metrics", headers: outside + [("Authorization", "Bearer owner")]).status == 401)
        await server.stop()
    }
}
