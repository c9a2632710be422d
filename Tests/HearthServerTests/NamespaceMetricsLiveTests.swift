import Foundation
import HearthServer
import HearthTesting
import Logging
import Testing

/// Every database metric carries the namespace it is about, and the access log line names
/// the database a request reached. Label values are only names of open databases: a name a
/// client makes up never becomes one.
@Suite(.serialized) struct NamespaceMetricsLiveTests {
    /// True when the tests run on PostgreSQL (`HEARTH_TEST_STORE=postgres`).
    static let sharedEngine = ProcessInfo.processInfo.environment["HEARTH_TEST_STORE"] == "postgres"

    /// The metrics line starting with `series` (labels included), its value.
    static func value(_ text: String, _ series: String) -> Double? {
        text.split(separator: "\n").first { $0.hasPrefix(series + " ") }.flatMap { Double($0.split(separator: " ").last ?? "") }
    }

    @Test func databaseSeriesAreLabelledWithTheirNamespace() async throws {
        let server = try NamespaceLiveTests.serverWithFile()
        #expect(try server.request("PUT", "/x.json?ns=env-a", #""a""#).status == 200)
        #expect(try server.request("PUT", "/y.json?ns=env-a", #""b""#).status == 200)
        #expect(try server.request("PUT", "/x.json", #""default""#).status == 200)
        #expect(try server.request("GET", "/x.json?ns=env-a").body == #""a""#)  // a miss
        #expect(try server.request("GET", "/x.json?ns=env-a").body == #""a""#)  // a hit
        let stream = try server.stream("/x.json?ns=env-a")
        #expect(try stream.nextEvent().name == "put")
        // Names no served database has: refused, and never a label.
        for made in ["made-up-1", "made-up-2"] {
            #expect(try server.request("PUT", "/x.json?ns=\(made)", "1").status == 404)
        }
        let text = try server.request("GET", "/metrics").body
        let expected: [(String, Double)] = [
            (#"hearth_http_requests_total{route="db.write",status="200",namespace="env-a"}"#, 2),
            (#"hearth_http_requests_total{route="db.write",status="200",namespace="(default)"}"#, 1),
            (#"hearth_http_requests_total{route="db.write",status="404"}"#, 2),
            (#"hearth_write_batch_size_count{namespace="env-a"}"#, 2),
            (#"hearth_write_batch_size_count{namespace="(default)"}"#, 1),
            (#"hearth_commit_duration_seconds_count{namespace="env-a"}"#, 2),
            (#"hearth_write_duration_seconds_count{namespace="env-a"}"#, 2),
            (#"hearth_write_queue_seconds_count{namespace="(default)"}"#, 1),
            // A node of a shared engine keeps no read cache: no lookups there.
            (#"hearth_read_cache_lookups_total{namespace="env-a",result="hit"}"#, Self.sharedEngine ? 0 : 1),
            (#"hearth_read_cache_lookups_total{namespace="env-a",result="miss"}"#, Self.sharedEngine ? 0 : 1),
            (#"hearth_open_streams{namespace="env-a"}"#, 1),
            (#"hearth_open_streams{namespace="(default)"}"#, 0),
            (#"hearth_storage_full{namespace="env-b"}"#, 0),
            ("hearth_namespaces", 2),
        ]
        for (series, count) in expected {
            #expect(Self.value(text, series) == count, "\(series) in \(text)")
        }
        #expect(!text.contains("made-up"), "\(text)")
        // The default's read cache saw no lookup of env-a's.
        #expect(Self.value(text, #"hearth_read_cache_lookups_total{namespace="(default)",result="hit"}"#) == 0)
        stream.close()
        await server.stop()
    }

    /// The access line's `ns`: the database the request reached, `(default)` included;
    /// none for a refused name or a request that reached no database.
    @Test func theAccessLineNamesTheDatabaseReached() async throws {
        let logs = CapturedLogs()
        let server = try LiveServer(rules: NamespaceLiveTests.open, logger: Logger(label: "live", factory: logs.handler)) { configuration in
            let folder = (configuration.rulesPath as NSString).deletingLastPathComponent
            try? writeFile(folder + "/a.json", NamespaceLiveTests.open)
            try? writeFile(folder + "/namespaces.json", #"{"namespaces": {"env-a": {"rules": "a.json"}}}"#)
            configuration.namespacesFile = folder + "/namespaces.json"
        }
        #expect(try server.request("PUT", "/one.json?ns=env-a", "1").status == 200)
        #expect(try server.request("PUT", "/two.json", "2").status == 200)
        #expect(try server.request("PUT", "/three.json?ns=made-up", "3").status == 404)
        #expect(try server.request("GET", "/healthz").status == 200)
        await server.stop()
        let byPath = Dictionary(logs.access.map { ($0["path"] ?? "", $0) }, uniquingKeysWith: { first, _ in first })
        #expect(byPath["/one.json"]?["ns"] == "env-a", "\(logs.access)")
        #expect(byPath["/two.json"]?["ns"] == "(default)", "\(logs.access)")
        #expect(byPath["/three.json"] != nil && byPath["/three.json"]?["ns"] == nil, "\(logs.access)")
        #expect(byPath["/healthz"] != nil && byPath["/healthz"]?["ns"] == nil, "\(logs.access)")
    }
}
