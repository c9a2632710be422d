import Foundation
import Testing

/// A small tmpfs mounted for one test, unmounted (lazily, so a leftover child cannot keep
/// it busy) when released. Needs root, as CI runs.
final class TmpfsMount: Sendable {
    let directory = TemporaryDirectory(prefix: "hearth-tmpfs")
    var path: String { directory.path }

    init(megabytes: Int) throws {
        let result = try run("/bin/mount", ["-t", "tmpfs", "-o", "size=\(megabytes)m,mode=0700", "tmpfs", directory.path])
        guard result.status == 0 else { throw MountError.failed(result.output) }
    }

    /// Grows (or shrinks) the mounted volume in place, as an operator resizing a disk.
    func resize(megabytes: Int) throws {
        let result = try run("/bin/mount", ["-o", "remount,size=\(megabytes)m", directory.path])
        guard result.status == 0 else { throw MountError.failed(result.output) }
    }

    deinit { _ = try? run("/bin/umount", ["-l", directory.path]) }

    enum MountError: Error { case failed(String) }

    /// Whether this process may mount a tmpfs (root in CI; not in an unprivileged sandbox).
    static let available: Bool = (try? TmpfsMount(megabytes: 1)) != nil
}

/// The disk fills: Hearth runs on an 8 MiB tmpfs and is
/// written to until the volume is full.
@Suite(.enabled(if: TmpfsMount.available, "mounting a tmpfs is not allowed here (needs root); CI runs as root"))
struct DiskFullEndToEndTests {
    /// PUTs `/fill/k<i>` (4 KB each) from `start` on one connection until an answer is not
    /// 204; prints `ack i` per acknowledged write, then `refused <status> <body>`.
    static let filler = #"""
    import http.client, sys
    conn = http.client.HTTPConnection("127.0.0.1", int(sys.argv[1]), timeout=30)
    for i in range(int(sys.argv[2]), int(sys.argv[2]) + 100000):
        conn.request("PUT", "/fill/k%d.json?print=silent" % i, '{"pad":"%s"}' % ("x" * 4000))
        r = conn.getresponse(); body = r.read().decode()
        if r.status != 204:
            print("refused %d %s" % (r.status, body), flush=True); break
        print("ack %d" % i, flush=True)
    """#

    /// Fills the volume; returns the acknowledged indexes and the refusal line.
    static func fill(port: Int, from start: Int) throws -> (acked: [Int], refusal: String) {
        let result = try run("/usr/bin/env", ["python3", "-c", filler, String(port), String(start)])
        let lines = result.output.split(separator: "\n")
        let acked = lines.compactMap { $0.hasPrefix("ack ") ? Int($0.dropFirst(4)) : nil }
        return (acked, lines.last.map(String.init) ?? "")
    }

    /// Sign-ups tried on the full volume before one must have been refused.
    static let maxSignUps = 5_000

    @Test func writesAre507AndNotReadyWhileFullDeletesStillWorkAndWritesResume() throws {
        let volume = try TmpfsMount(megabytes: 8)
        let data = volume.path + "/data"
        try FileManager.default.createDirectory(atPath: data, withIntermediateDirectories: false)
        // Sign-ups below come from one address, past the default sign-in throttle.
        var server: HearthProcess? = try HearthProcess.serve(dataDirectory: data, environment: ["HEARTH_SIGN_IN_ATTEMPTS_PER_MINUTE": "100000"])
        defer { server?.signal(SIGKILL) }
        let base = server!.baseURL
        // Started on an 8 MiB volume, with the reserve held.
        #expect(FileManager.default.fileExists(atPath: data + "/hearth.reserve"))
        #expect(try curl("GET", base + "/readyz").status == 200)

        let first = try Self.fill(port: server!.port, from: 0)
        #expect(first.acked.count > 100, "the volume took only \(first.acked.count) writes")
        #expect(first.refusal.hasPrefix("refused 507 "), "\(first.refusal)")
        #expect(first.refusal.contains("Insufficient storage: the server's disk is full"))

        // Not ready, with the reason; counted; the log says what to do.
        let ready = try curl("GET", base + "/readyz")
        #expect(ready.status == 503)
        #expect(ready.body.contains("the data volume is full"))
        // An account change that cannot commit answers 507 in the Identity Toolkit shape.
        // One that fits still commits: the WAL is checkpointed off the writer,
        // and once a checkpoint has copied it the WAL starts over inside its file, which
        // has room for small writes. So sign up until one is refused; each takes room.
        var signUp = try curl("POST", base + "/v1/accounts:signUp", body: #"{"returnSecureToken":true}"#)
        var signUps = 1
        while signUp.status == 200 && signUps < Self.maxSignUps {
            signUp = try curl("POST", base + "/v1/accounts:signUp", body: #"{"returnSecureToken":true}"#)
            signUps += 1
        }
        #expect(signUp.status == 507, "\(signUps) sign-ups")
        #expect(signUp.body.contains("STORAGE_FULL"))
        let metrics = try curl("GET", base + "/metrics").body
        #expect(metrics.contains(#"hearth_storage_full{namespace="(default)"} 1"#))
        let refusals = metrics.split(separator: "\n").first { $0.hasPrefix(#"hearth_storage_full_refusals_total{namespace="(default)"} "#) }
        #expect((refusals.flatMap { Double($0.split(separator: " ")[1]) } ?? 0) >= 2)
        try server!.waitForLog("Free space on the volume or delete data through the API", count: 1)

        // A delete commits on the full disk (the reserve), and frees room for writes.
        let delete = try curl("DELETE", base + "/fill/k0.json")
        #expect(delete.status == 200)
        #expect(try curl("GET", base + "/fill/k0.json").body == "null")

        // Full again; then the operator grows the volume: ready again, writes resume.
        let second = try Self.fill(port: server!.port, from: first.acked.count)
        #expect(second.refusal.hasPrefix("refused 507 "), "\(second.refusal)")
        #expect(try curl("GET", base + "/readyz").status == 503)
        try volume.resize(megabytes: 16)
        #expect(try curl("GET", base + "/readyz").status == 200)
        try server!.waitForLog("space on the data volume is back", count: 1)
        #expect(try curl("PUT", base + "/after.json", body: "1").status == 200)
        #expect(try curl("GET", base + "/metrics").body.contains(#"hearth_storage_full{namespace="(default)"} 0"#))

        // Nothing acknowledged was lost.
        server!.signal(SIGTERM)
        #expect(try server!.waitForExit() == 0)
        server = try HearthProcess.serve(dataDirectory: data)
        let stored = try curl("GET", server!.baseURL + "/fill.json?shallow=true")
        let keys = Set(((json(stored.body) as? [String: Any]) ?? [:]).keys)
        let expected = Set((first.acked.dropFirst() + second.acked).map { "k\($0)" })
        #expect(expected.subtracting(keys).isEmpty, "acknowledged but lost: \(expected.subtracting(keys).prefix(5))")
        #expect(!keys.contains("k0"))
        #expect(try curl("GET", server!.baseURL + "/after.json").body == "1")
        withExtendedLifetime(volume) {}  // mounted until here
    }
}
