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
    static let curlMarker = "<!-- curl examples"
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

    static func readme() throws -> String { try String(contentsOfFile: Self.root + "/README.md", encoding: .utf8) }

    /// Starts the server as the README does (the defaults: ./rules.json, ./hearth-data) in
    /// `folder`, holding a copy of the repository's rules.json, and runs the quickstart
    /// block against it: the server, the output's lines and its JSON object lines.
    static func runQuickstart(in folder: TemporaryDirectory) throws -> (server: HearthProcess, lines: [String], bodies: [NSDictionary]) {
        let readme = try Self.readme()
        #expect(readme.contains("swift run -c release hearth serve      # http://127.0.0.1:9000, data in ./hearth-data, rules from ./rules.json"))
        let script = try Self.block(after: Self.marker, in: readme)
        #expect(script.hasPrefix(Self.addressLine + "\n"))

        try FileManager.default.copyItem(atPath: Self.root + "/rules.json", toPath: folder.path + "/rules.json")
        let server = try HearthProcess(arguments: ["serve", "--port", "0"], dataDirectory: folder.path + "/hearth-data",
                                       currentDirectory: folder.path)
        try server.waitUntilListening()
        let (lines, bodies) = try Self.runBlock(script, against: server)
        return (server, lines, bodies)
    }

    /// Runs a README block with bash against `server` (its first line, `addressLine`,
    /// pointed at the server's address), bounded by `timeout` so a block that never ends
    /// fails here instead of hanging: the output's lines and its JSON object lines, after
    /// checking that it succeeded without a curl error or an `"error"` answer.
    static func runBlock(_ script: String, against server: HearthProcess, objects: Int? = 5,
                    sourceLocation: SourceLocation = #_sourceLocation) throws -> (lines: [String], bodies: [NSDictionary]) {
        let runnable = "H=\(server.baseURL)\n" + script.dropFirst(Self.addressLine.count + 1)
        let (status, output) = try Spawn.run("/usr/bin/timeout", [String(Self.blockSeconds), "/bin/bash", "-c", runnable],
                                             input: nil, captureStderr: true)
        #expect(status == 0, "\(output)", sourceLocation: sourceLocation)
        #expect(!output.contains("curl:"), "\(output)", sourceLocation: sourceLocation)
        #expect(!output.contains("\"error\""), "\(output)", sourceLocation: sourceLocation)
        let lines = output.components(separatedBy: "\n")
        let bodies = lines.filter { $0.hasPrefix("{") }.compactMap(Self.object)
        if let objects { try #require(bodies.count == objects, "\(output)", sourceLocation: sourceLocation) }
        return (lines, bodies)
    }

    /// How long a README block may run before `timeout` ends it (exit status 124): far
    /// above what the blocks take (their streams end after 3 s), so only a block that does
    /// not end reaches it.
    static let blockSeconds = 120

    /// The quickstart pasted twice in a row against the same server, as a newcomer who
    /// tries it again does: both runs succeed (no `EMAIL_EXISTS`), each with its own
    /// anonymous user and its own email account.
    @Test func theReadmeQuickstartRunsAsWrittenTwice() throws {
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
        // Email sign-up and sign-in answer with ID tokens, for the address made from the uid.
        let email = "ann.\(uid)@example.com".lowercased()
        for body in bodies[3...] {
            #expect((body["idToken"] as? String)?.isEmpty == false)
            #expect(body["email"] as? String == email)
        }
        #expect(bodies[4]["registered"] as? Bool == true)

        // The same block again, against the same server: a new anonymous user, a new email
        // account, every answer a success (runBlock(_:against:) checks there is no "error").
        let second = try Self.runBlock(Self.block(after: Self.marker, in: Self.readme()), against: server).bodies
        let secondUID = try #require(second[0]["createdBy"] as? String)
        #expect(secondUID != uid)
        #expect(second[1] == ["oslo": second[0]])
        #expect(second[3]["email"] as? String == "ann.\(secondUID)@example.com".lowercased())
        #expect(second[4]["registered"] as? Bool == true)

        // createdBy is the anonymous account each run signed up; each run's email account exists.
        let users = try run(HearthProcess.binaryPath, ["users", "list", "--data-dir", folder.path + "/hearth-data"])
        #expect(users.output.contains("\(uid)\t-\tanonymous\tenabled"), "\(users.output)")
        #expect(users.output.contains("\(secondUID)\t-\tanonymous\tenabled"), "\(users.output)")
        #expect(users.output.contains(email) && users.output.contains("ann.\(secondUID)@example.com".lowercased()), "\(users.output)")

        server.signal(SIGTERM)
        #expect(try server.waitForExit() == 0)
    }

    /// The "Use it with curl" block pasted whole into a shell, against a server with the
    /// open rules file it asks for: every command answers, and the block ends by itself
    /// (its live stream has `--max-time`) instead of running until `timeout` stops it.
    @Test func theReadmeCurlExamplesRunWholeAndEnd() throws {
        let folder = TemporaryDirectory()
        let server = try HearthProcess.serve(dataDirectory: folder.path)
        let script = try Self.block(after: Self.curlMarker, in: Self.readme())
        #expect(script.hasPrefix(Self.addressLine + "\n"))
        #expect(script.contains("text/event-stream"))
        // The answers have no newline after them, so the stream's first event follows the
        // previous answer on its line.
        let output = try Self.runBlock(script, against: server, objects: nil).lines.joined(separator: "\n")
        #expect(output.contains("event: put\nid: "), "\(output)")
        // The multi-path PATCH renamed the favourite the block's first PUT wrote.
        #expect(try curl("GET", server.baseURL + "/users/alice/favorites/oslo/name.json").body == #""Bergen""#)
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
