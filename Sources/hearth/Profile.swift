import ArgumentParser
import Dispatch
import Foundation
import HearthAccounts
import HearthHTTPClient
import HearthJSON
import HearthServer
import HearthStore

/// `hearth profile`: records what a running server's database does for a while
/// (`POST /.profile`, docs/profiling.md) and prints it as tables or JSON.
struct Profile: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Profile a running server's database for --duration seconds: operations by kind and path, bandwidth, unindexed queries, permission denials, the most expensive rules and the slowest operations.",
        discussion: """
            Needs an admin token: --token, or one minted from the data directory (--data-dir, --store) as 'hearth token --admin' does. \
            The node at --url profiles only what it serves itself: on PostgreSQL, run it against each node (the report names the node). \
            Paths are shown as patterns, keys collapsed by the rules' $variables (/users/$uid); keys past the rules show as $other. \
            At most one window records per namespace and node at a time; the longest is \(Profiler.Limits.maxDurationSeconds) s.
            """)

    @Option(help: "The server, e.g. http://127.0.0.1:9000.") var url: String
    @Option(help: "Seconds to record (1-\(Profiler.Limits.maxDurationSeconds)).") var duration: Int
    @Option(name: .customLong("ns"), help: "The namespace (default: the default namespace).") var namespace: String?
    @Flag(help: "Print the report as JSON instead of tables.") var json = false
    @Option(help: "An admin token (default: minted from the data directory).") var token: String?
    @OptionGroup var data: ServerStoreOption

    func validate() throws {
        guard (1...Profiler.Limits.maxDurationSeconds).contains(duration) else {
            throw ValidationError("--duration must be 1...\(Profiler.Limits.maxDurationSeconds) seconds.")
        }
        do {
            _ = try HTTPURL(url)
        } catch {
            throw ValidationError("--url: \(error)")
        }
        if let namespace, let problem = NamespaceName.problem(namespace) { throw ValidationError("--ns: \(problem)") }
    }

    func run() throws {
        try Tool.run {
            // Ctrl-C (or SIGTERM) ends the window early; the report is printed all the same.
            let waiter = SignalWaiter(for: [SIGINT, SIGTERM], onHangup: {})
            let interrupted = DispatchSemaphore(value: 0)
            Task {
                _ = await waiter.next()
                interrupted.signal()
            }
            let started = try send("start", extra: "&duration=\(duration)")
            let node = started.objectValue?["node"]?.objectValue
            let name = node?["hostname"]?.stringValue ?? "?"
            FileHandle.standardError.write(Data("profiling \(namespace ?? "the default namespace") on \(name) for \(duration) s (Ctrl-C stops early)\n".utf8))
            _ = interrupted.wait(timeout: .now() + .seconds(duration))
            let report = try send("stop", extra: "")
            if json {
                print(String(decoding: JSONWriter.write(report, style: .pretty), as: UTF8.self))
            } else {
                print(ProfileTables.render(report), terminator: "")
            }
        }
    }

    /// `POST /.profile?action=…` with an admin token; the answer's JSON, or a failure
    /// saying what went wrong.
    private func send(_ action: String, extra: String) throws -> JSONValue {
        let base = url.hasSuffix("/") ? String(url.dropLast()) : url
        let ns = namespace.map { "&ns=\($0)" } ?? ""
        let target: HTTPURL
        do {
            target = try HTTPURL("\(base)/.profile?action=\(action)\(ns)\(extra)")
        } catch {
            throw Tool.fail("--url: \(error)")
        }
        let request = HTTPClientRequest(method: "POST", url: target, headers: [("Authorization", "Bearer \(try adminToken())")])
        let response: HTTPClientResponse
        do {
            response = try HTTPClient(maxResponseBytes: 8 << 20).send(request)
        } catch {
            throw Tool.fail("cannot reach \(url): \(error)")
        }
        let body = try? JSONParser.parse(response.body)
        guard response.isSuccess, let body else {
            let reason = body?.objectValue?["error"]?.stringValue ?? "HTTP \(response.status)"
            switch response.status {
            case 401, 403: throw Tool.fail("the server refused the token (\(response.status)): \(reason); give an admin token (--token) or the server's data directory (--data-dir)")
            case 404: throw Tool.fail("not found at \(url) (\(reason)): check --url and --ns")
            default: throw Tool.fail("\(action) failed (\(response.status)): \(reason)")
            }
        }
        return body
    }

    /// `--token`, or an admin token minted from the data directory (fresh for each request:
    /// a long window outlives a token's lifetime).
    private func adminToken() throws -> String {
        if let token { return token }
        try data.requireDataDirectory()
        let store = try Engines.open(try data.location)
        defer { store.close() }
        let service = AccountService(accounts: store.accountStore, keys: try KeyRing(store: store.signingKeys), settings: AuthSettings())
        do {
            return try service.operatorToken(now: WallClock.milliseconds())
        } catch {
            throw Tool.fail("cannot mint an admin token from \(data.path): \(error.message)")
        }
    }
}
