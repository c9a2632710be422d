import Foundation
import Testing

/// Live streams from the built binary, read by `curl -N` as the README shows it.
@Suite struct StreamEndToEndTests {
    let dir = TemporaryDirectory()

    @Test func curlSeesTheSnapshotThenEachChangeAndCancelOnAReloadThatDenies() throws {
        let server = try HearthProcess.serve(dataDirectory: dir.path)
        let base = server.baseURL
        _ = try curl("PUT", base + "/users/alice/favorites/oslo.json", body: #"{"name":"Oslo"}"#)
        let stream = try CurlStream(base + "/users/alice.json")
        try stream.waitFor("event: put\nid: 1\ndata: {\"path\":\"/\",\"data\":{\"favorites\":{\"oslo\":{\"name\":\"Oslo\"}}}}\n\n")
        _ = try curl("PATCH", base + "/users/alice/favorites/oslo.json", body: #"{"note":"fjord"}"#)
        try stream.waitFor("event: patch\nid: 2\ndata: {\"path\":\"/favorites/oslo\",\"data\":{\"note\":\"fjord\"}}\n\n")
        _ = try curl("DELETE", base + "/users/alice/favorites.json")
        try stream.waitFor("event: put\nid: 3\ndata: {\"path\":\"/favorites\",\"data\":null}\n\n")

        // SIGHUP with rules that no longer let anyone read: the stream is cancelled and closed.
        _ = try HearthProcess.writeRules(#"{"rules": {".write": true}}"#, in: dir.path)
        server.signal(SIGHUP)
        try stream.waitFor("event: cancel\ndata: null\n\n")
        #expect(try stream.waitForExit() == 0)
        #expect(try curl("GET", base + "/users.json").status == 401)
        server.signal(SIGTERM)
        #expect(try server.waitForExit() == 0)
    }

    @Test func sigtermEndsOpenStreamsAndExitsCleanly() throws {
        let server = try HearthProcess.serve(dataDirectory: dir.path)
        let streams = try (0..<3).map { _ in try CurlStream(server.baseURL + "/x.json") }
        for stream in streams { try stream.waitFor("event: put\n") }
        server.signal(SIGTERM)
        #expect(try server.waitForExit() == 0)
        for stream in streams { #expect(try stream.waitForExit() == 0) }
    }
}
