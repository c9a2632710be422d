import Foundation
import Synchronization
import Testing

/// `kill -9` under a stream of acknowledged writes loses none of them (docs/design.md §4:
/// WAL, synchronous=FULL, acknowledgement only after commit).
@Suite struct CrashEndToEndTests {
    let dir = TemporaryDirectory()

    /// A Python client on one keep-alive connection: PUT after PUT, printing each
    /// acknowledged index, until the server goes away.
    static let writer = #"""
    import http.client, sys
    conn = http.client.HTTPConnection("127.0.0.1", int(sys.argv[1]), timeout=30)
    for i in range(1000000):
        body = '{"i":%d,"pad":"%s"}' % (i, "x" * 200)
        try:
            conn.request("PUT", "/crash/k%d.json?print=silent" % i, body)
            r = conn.getresponse(); r.read()
        except Exception:
            break
        if r.status != 204:
            print("bad %d" % r.status, flush=True); break
        print("ack %d" % i, flush=True)
    """#

    /// Acknowledged writes the test waits for before it kills the server.
    static let acknowledgedBeforeKill = 300

    @Test func acknowledgedWritesSurviveSigkill() throws {
        let server = try HearthProcess.serve(dataDirectory: dir.path)
        let writer = try AckingWriter(port: server.port)
        #expect(writer.waitFor(acks: Self.acknowledgedBeforeKill))
        server.signal(SIGKILL)
        _ = try server.waitForExit()
        writer.waitUntilExit()
        let acknowledged = writer.acknowledged
        #expect(acknowledged.count >= Self.acknowledgedBeforeKill)

        let restarted = try HearthProcess.serve(dataDirectory: dir.path)
        let stored = try curl("GET", restarted.baseURL + "/crash.json?shallow=true")
        let keys = Set(((json(stored.body) as? [String: Any]) ?? [:]).keys)
        let missing = acknowledged.filter { !keys.contains("k\($0)") }
        #expect(missing.isEmpty, "acknowledged but lost: \(missing.prefix(10))")
        let last = acknowledged.last ?? 0
        #expect(try curl("GET", restarted.baseURL + "/crash/k\(last)/i.json").body == String(last))
        restarted.signal(SIGTERM)
        #expect(try restarted.waitForExit() == 0)

        let check = try run("/usr/bin/env", ["python3", "-c",
            "import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute('PRAGMA integrity_check').fetchone()[0])",
            dir.path + "/hearth.sqlite"])
        #expect(check.output.trimmingCharacters(in: .whitespacesAndNewlines) == "ok")
    }
}

/// Malformed requests from a raw socket get a 400 and a closed connection, never a crash.
@Suite struct MalformedEndToEndTests {
    let dir = TemporaryDirectory()

    static let client = #"""
    import socket, sys
    port = int(sys.argv[1])
    cases = [b"GARBAGE\r\n\r\n", b"GET / HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n",
             b"GET /\x00 HTTP/1.1\r\nHost: x\r\n\r\n", b"GET / HTTP/1.1\r\nBad Header\r\n\r\n"]
    for raw in cases:
        s = socket.create_connection(("127.0.0.1", port), timeout=30)
        s.sendall(raw)
        data = b""
        while True:
            chunk = s.recv(65536)
            if not chunk: break
            data += chunk
        s.close()
        print(data.split(b"\r\n", 1)[0].decode())
    """#

    @Test func malformedRequestsGet400AndAClose() throws {
        let server = try HearthProcess.serve(dataDirectory: dir.path)
        let result = try run("/usr/bin/env", ["python3", "-c", Self.client, String(server.port)])
        let lines = result.output.split(separator: "\n")
        #expect(lines.count == 4)
        for line in lines { #expect(line.hasPrefix("HTTP/1.1 400")) }
        #expect(try curl("GET", server.baseURL + "/healthz").status == 200)
        server.signal(SIGTERM)
        #expect(try server.waitForExit() == 0)
    }
}
