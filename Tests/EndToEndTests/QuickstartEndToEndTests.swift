import Foundation
import Testing

/// The README's signed-in quickstart, run
/// exactly as written: the block after the `<!-- quickstart` marker is read from README.md
/// and run with bash against the built binary, serving the repository's own `rules.json`
/// with the defaults the README's `hearth serve` line uses. Only the server address in the
/// block's first line is replaced (the test's server listens on a free port, not 9000).
@Suite struct QuickstartEndToEndTests {
    static let root = String(#filePath).components(separatedBy: "/Tests/")[0]
    static let marker = "<!-- quickstart"
    static let addressLine = "H=http://127.0.0.1:9000"

    /// The first fenced block after the line that starts with `marker`.
    static func block(after marker: String, in text: String) throws -> String {
        let lines = text.components(separatedBy: "\n")
        let start = try #require(lines.firstIndex { $0.hasPrefix(marker) }, "no \(marker) marker in README.md")
        let open = try #require(lines[start...].firstIndex { $0.hasPrefix("```") })
        let close = try #require(lines[(open + 1)...].firstIndex { $0.hasPrefix("```") })
        return lines[(open + 1)..<close].joined(separator: "\n") + "\n"
    }

    static func object(_ line: String) -> NSDictionary? { json(line) as? NSDictionary }

    /// Starts the server as the README does (the defaults: ./rules.json, ./hearth-data) in
    /// `folder`, holding a copy of the repository's rules.json, and runs the quickstart
    /// block against it: the server, the output's lines and its JSON object lines.
    static func runQuickstart(in folder: TemporaryDirectory) throws -> (server: HearthProcess, lines: [String], bodies: [NSDictionary]) {
        let readme = try String(contentsOfFile: Self.root + "/README.md", encoding: .utf8)
        #expect(readme.contains("swift run -c release hearth serve      # http://127.0.0.1:9000, data in ./hearth-data, rules from ./rules.json"))
        let script = try Self.block(after: Self.marker, in: readme)
        #expect(script.hasPrefix(Self.addressLine + "\n"))

        try FileManager.default.copyItem(atPath: Self.root + "/rules.json", toPath: folder.path + "/rules.json")
        let server = try HearthProcess(arguments: ["serve", "--port", "0"], dataDirectory: folder.path + "/hearth-data",
                                       currentDirectory: folder.path)
        try server.waitUntilListening()
        let runnable = "H=\(server.baseURL)\n" + script.dropFirst(Self.addressLine.count + 1)
        let (status, output) = try Spawn.run("/bin/bash", ["-c", runnable], input: nil, captureStderr: true)
        #expect(status == 0, "\(output)")
        #expect(!output.contains("curl:"), "\(output)")
        #expect(!output.contains("\"error\""), "\(output)")
        let lines = output.components(separatedBy: "\n")
        let bodies = lines.filter { $0.hasPrefix("{") }.compactMap(Self.object)
        try #require(bodies.count == 5, "\(output)")
        return (server, lines, bodies)
    }

    @Test func theReadmeQuickstartRunsAsWritten() throws {
        let folder = TemporaryDirectory()
        let (server, lines, bodies) = try Self.runQuickstart(in: folder)
        // The write succeeded: the answer is the stored favourite, server timestamp resolved.
        let written = bodies[0]
        let uid = try #require(written["createdBy"] as? String)
        #expect(written["id"] as? String == "oslo")
        #expect(written["createdAt"] is NSNumber)
        // The read and the ordered query return it.
        let expected: NSDictionary = ["oslo": written]
        #expect(bodies[1] == expected)
        #expect(bodies[2] == expected)
        // The stream's first event is a put of the whole location.
        let event = try #require(lines.firstIndex(of: "event: put"), "\(lines)")
        let data = try #require(lines[event...].first { $0.hasPrefix("data: ") })
        #expect(Self.object(String(data.dropFirst("data: ".count))) == ["path": "/", "data": expected])
        // Email sign-up and sign-in answer with ID tokens.
        for body in bodies[3...] {
            #expect((body["idToken"] as? String)?.isEmpty == false)
            #expect(body["email"] as? String == "ann@example.com")
        }
        #expect(bodies[4]["registered"] as? Bool == true)
        // createdBy is the anonymous account the quickstart signed up.
        let users = try run(HearthProcess.binaryPath, ["users", "list", "--data-dir", folder.path + "/hearth-data"])
        #expect(users.output.contains("\(uid)\t-\tanonymous\tenabled"), "\(users.output)")

        server.signal(SIGTERM)
        #expect(try server.waitForExit() == 0)
    }

    /// What a user does next: the quickstart, whose ordered query builds
    /// the index, then a backup while the server runs, then a restore onto a new machine
    /// (the data directory does not exist yet: the restore creates it, 0700), then a server
    /// on the restored directory answers the same indexed query the same way. On the SQLite
    /// the README installs (Debian 12: 3.40.1), the backup used to fail its integrity check.
    @Test func theQuickstartThenABackupAndARestoreOnANewMachine() throws {
        let folder = TemporaryDirectory()
        let (server, _, bodies) = try Self.runQuickstart(in: folder)
        let uid = try #require(bodies[0]["createdBy"] as? String)
        let data = folder.path + "/hearth-data"
        // The ordered query asked the writer to build the index; a write acknowledged after
        // it comes from the same serial writer, so the index is built by then.
        let admin = try runHearth(["token", "--admin", "--data-dir", data]).output.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(try curl("PUT", server.baseURL + "/marker.json", body: "1", headers: ["Authorization: Bearer \(admin)"]).status == 200)
        #expect(try MigrationEndToEndTests.sqlite(data + "/hearth.sqlite", "SELECT count(*) FROM query_index") == "1")

        let backup = folder.path + "/backup"
        let made = try runHearth(["backup", backup, "--data-dir", data])
        #expect(made.status == 0, "\(made.error)")
        server.signal(SIGTERM)
        #expect(try server.waitForExit() == 0)

        let machine = TemporaryDirectory()
        let restoredData = machine.path + "/hearth-data"
        let restored = try runHearth(["restore", backup, "--data-dir", restoredData])
        #expect(restored.status == 0, "\(restored.error)")
        #expect(MigrationEndToEndTests.mode(restoredData) == 0o700)
        #expect(try MigrationEndToEndTests.sqlite(restoredData + "/hearth.sqlite", "PRAGMA integrity_check") == "ok")

        try FileManager.default.copyItem(atPath: Self.root + "/rules.json", toPath: machine.path + "/rules.json")
        let again = try HearthProcess(arguments: ["serve", "--port", "0"], dataDirectory: restoredData, currentDirectory: machine.path)
        try again.waitUntilListening()
        let token = try runHearth(["token", "--uid", uid, "--data-dir", restoredData]).output.trimmingCharacters(in: .whitespacesAndNewlines)
        let query = try curl("GET", again.baseURL + "/users/\(uid)/favorites.json?orderBy=%22createdAt%22&limitToLast=10",
                             headers: ["Authorization: Bearer \(token)"])
        #expect(query.status == 200)
        #expect(Self.object(query.body) == bodies[2])
        again.signal(SIGTERM)
        #expect(try again.waitForExit() == 0)
    }
}
