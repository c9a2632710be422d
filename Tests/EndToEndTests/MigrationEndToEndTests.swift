import Foundation
import Synchronization
import Testing

/// The operator's data tools with the built binary: `hearth backup|restore` under write
/// load, `hearth export|import`, and `hearth users import` of Firebase password hashes
/// signed in to over REST.
@Suite struct MigrationEndToEndTests {
    let dir = TemporaryDirectory()

    /// The most memory (peak RSS) `hearth import` may use on the generated file, which is
    /// larger than this, so an import that held the file would cross it.
    static let importMemoryBoundBytes = 150 * 1024 * 1024
    /// The size of the file the bounded-memory test generates.
    static let generatedImportBytes = 200 * 1024 * 1024
    /// Acknowledged writes before the backup starts.
    static let acknowledgedBeforeBackup = 200

    /// Runs the binary through the suite's `run` (standard output), with standard error
    /// captured to a file by a shell.
    func hearth(_ arguments: [String], input: String? = nil) throws -> (status: Int32, output: String, error: String) {
        try runHearth(arguments, input: input)
    }

    static func sqlite(_ database: String, _ query: String) throws -> String {
        let result = try run("/usr/bin/env", ["python3", "-c",
            "import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute(sys.argv[2]).fetchone()[0])", database, query])
        return result.output.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    static func mode(_ path: String) -> Int {
        ((try? FileManager.default.attributesOfItem(atPath: path)[.posixPermissions]) as? Int) ?? -1
    }

    // MARK: Backup and restore

    /// A Python client PUTs without pause (`CrashEndToEndTests.writer`); the backup runs in
    /// the middle. The restored copy passes the integrity check and holds every write
    /// acknowledged before the backup began; tokens signed before it still verify.
    @Test func aBackupUnderWriteLoadRestoresEveryAcknowledgedWrite() throws {
        let server = try HearthProcess.serve(dataDirectory: dir.path)
        let adminToken = try hearth(["token", "--admin", "--data-dir", dir.path]).output.trimmingCharacters(in: .whitespacesAndNewlines)
        let writer = try AckingWriter(port: server.port)
        #expect(writer.waitFor(acks: Self.acknowledgedBeforeBackup))

        let acknowledgedBefore = writer.acknowledged
        let backupDirectory = dir.path + "-backup"
        defer { try? FileManager.default.removeItem(atPath: backupDirectory) }
        let backup = try hearth(["backup", backupDirectory, "--data-dir", dir.path])
        #expect(backup.status == 0, "\(backup.error)")
        // The writes went on during and after the backup.
        #expect(writer.waitFor(acks: writer.acknowledged.count + 50))
        writer.stop()
        #expect(acknowledgedBefore.count >= Self.acknowledgedBeforeBackup)

        // The backup's layout and modes.
        #expect(Self.mode(backupDirectory) == 0o700)
        #expect(Self.mode(backupDirectory + "/hearth.sqlite") == 0o600)
        let keyFiles = try FileManager.default.contentsOfDirectory(atPath: backupDirectory + "/keys")
        #expect(keyFiles.contains("current") && keyFiles.contains { $0.hasSuffix(".key") })
        for file in keyFiles { #expect(Self.mode(backupDirectory + "/keys/" + file) == 0o600) }
        let again = try hearth(["backup", backupDirectory, "--data-dir", dir.path])
        #expect(again.status == 1 && again.error.contains("already exists"))

        // Restoring into the data directory of the running server is refused, naming it.
        let busy = try hearth(["restore", backupDirectory, "--data-dir", dir.path, "--force"])
        #expect(busy.status == 1 && busy.error.contains("is served by a running Hearth server (pid \(server.process.processIdentifier)"), "\(busy.error)")
        server.signal(SIGTERM)
        #expect(try server.waitForExit() == 0)

        let target = TemporaryDirectory()
        let restore = try hearth(["restore", backupDirectory, "--data-dir", target.path])
        #expect(restore.status == 0, "\(restore.error)")
        #expect(try Self.sqlite(target.path + "/hearth.sqlite", "PRAGMA integrity_check") == "ok")
        let twice = try hearth(["restore", backupDirectory, "--data-dir", target.path])
        #expect(twice.status == 1 && twice.error.contains("already exists"))

        // Only the restored keys can make the old admin token valid under closed rules.
        let restored = try HearthProcess.serve(dataDirectory: target.path, rules: #"{"rules": {".read": false, ".write": false}}"#)
        let admin = "Authorization: Bearer \(adminToken)"
        #expect(try curl("GET", restored.baseURL + "/crash/k0.json").status == 401)
        let stored = try curl("GET", restored.baseURL + "/crash.json?shallow=true", headers: [admin])
        #expect(stored.status == 200)
        let keys = Set(((json(stored.body) as? [String: Any]) ?? [:]).keys)
        let missing = acknowledgedBefore.filter { !keys.contains("k\($0)") }
        #expect(missing.isEmpty, "acknowledged before the backup but missing: \(missing.prefix(10))")
        restored.signal(SIGTERM)
        #expect(try restored.waitForExit() == 0)
    }

    // MARK: Export and import

    static let document = #"""
        {"users":{"alice":{"name":"Alice","age":30,"tags":["a","b",null,"d"],"score":97.5,"ok":true},
                  "bob":{"name":"Bøb 😀","nested":{"deep":{"er":{"est":-9223372036854775808}}}}},
         "list":[10,20,30],"sparse":{"1":"x","7":"y"},"big":9007199254740993,"tiny":1e-7,"s":"line\nbreak \"quoted\""}
        """#

    /// Export while the server serves, import into a fresh directory (the server stopped),
    /// export again: the same bytes, and the same answers over REST.
    @Test func exportThenImportIsByteIdentical() throws {
        let server = try HearthProcess.serve(dataDirectory: dir.path)
        #expect(try curl("PUT", server.baseURL + "/.json", body: Self.document).status == 200)
        let first = dir.path + "/export-1.json"
        let export = try hearth(["export", "--data-dir", dir.path, "--output", first])
        #expect(export.status == 0, "\(export.error)")
        #expect(Self.mode(first) == 0o600)
        let refused = try hearth(["import", first, "--data-dir", dir.path])
        #expect(refused.status == 1 && refused.error.contains("is served by a running Hearth server (pid \(server.process.processIdentifier)"), "\(refused.error)")
        let original = try curl("GET", server.baseURL + "/.json").body
        server.signal(SIGTERM)
        #expect(try server.waitForExit() == 0)

        let copy = TemporaryDirectory()
        let load = try hearth(["import", first, "--data-dir", copy.path])
        #expect(load.status == 0, "\(load.error)")
        #expect(load.output.contains("imported 17 leaves at /"))
        let second = try hearth(["export", "--data-dir", copy.path])
        #expect(second.status == 0)
        let firstBytes = try #require(FileManager.default.contents(atPath: first))
        #expect(Data(second.output.utf8) == firstBytes)
        #expect(second.output.hasPrefix(#"{"big":9007199254740993,"list":{"0":10,"1":20,"2":30},"#))

        // A part: export /users, import it elsewhere under another path.
        let part = try hearth(["export", "--path", "/users/alice", "--data-dir", copy.path])
        #expect(part.output == #"{"age":30,"name":"Alice","ok":true,"score":97.5,"tags":{"0":"a","1":"b","3":"d"}}"# + "\n")

        let served = try HearthProcess.serve(dataDirectory: copy.path)
        let reread = try curl("GET", served.baseURL + "/.json").body
        #expect(json(reread) == json(original))
        served.signal(SIGTERM)
        #expect(try served.waitForExit() == 0)
    }

    @Test func anInvalidKeyReportsItsPathAndChangesNothing() throws {
        let good = dir.path + "/good.json"
        try Self.document.write(toFile: good, atomically: true, encoding: .utf8)
        let data = dir.path + "/data"
        try FileManager.default.createDirectory(atPath: data, withIntermediateDirectories: false)  // only serve creates one
        #expect(try hearth(["import", good, "--data-dir", data]).status == 0)
        let before = try hearth(["export", "--data-dir", data]).output

        let bad = dir.path + "/bad.json"
        try #"{"users":{"carol":{"profile":{"ok":1,"bad.key":2}}}}"#.write(toFile: bad, atomically: true, encoding: .utf8)
        let result = try hearth(["import", bad, "--path", "/people", "--data-dir", data])
        #expect(result.status == 1)
        #expect(result.error.contains(#"Invalid data at /people/users/carol/profile: key "bad.key" contains ."#), "\(result.error)")
        let broken = dir.path + "/broken.json"
        try #"{"users":{"carol":[1,2"#.write(toFile: broken, atomically: true, encoding: .utf8)
        let cut = try hearth(["import", broken, "--data-dir", data])
        #expect(cut.status == 1 && cut.error.contains("unexpected end of input at offset 22"), "\(cut.error)")
        #expect(try hearth(["export", "--data-dir", data]).output == before)
    }

    /// A generated file larger than the bound is imported, and exported back, with a peak
    /// RSS under it (measured by a Python parent: `ru_maxrss` of its only child, i.e. the
    /// child's VmHWM at exit). Measured here: about 60 MiB for the import, 28 MiB for the
    /// export (debug build).
    @Test func importMemoryStaysBounded() throws {
        let file = dir.path + "/big.json"
        let items = try Self.generate(file, bytes: Self.generatedImportBytes)
        try FileManager.default.createDirectory(atPath: dir.path + "/data", withIntermediateDirectories: false)  // only serve creates one
        let measure = """
            import resource, subprocess, sys
            result = subprocess.run(sys.argv[1:], stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
            print(result.returncode)
            print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024)
            print(result.stdout.decode())
            """
        let result = try run("/usr/bin/env", ["python3", "-c", measure, HearthProcess.binaryPath, "import", file, "--data-dir", dir.path + "/data"])
        let lines = result.output.split(separator: "\n")
        #expect(lines.first == "0", "\(result.output)")
        let peak = try #require(lines.count > 1 ? Int(lines[1]) : nil)
        #expect(peak < Self.importMemoryBoundBytes, "peak RSS \(peak / 1_048_576) MiB")
        #expect(result.output.contains("imported \(items * 3) leaves at /"))
        #expect(try Self.sqlite(dir.path + "/data/hearth.sqlite", "SELECT count(*) FROM nodes") == String(items * 3))

        // Exporting it back is bounded the same way.
        let exported = dir.path + "/exported.json"
        let export = try run("/usr/bin/env", ["python3", "-c", measure, HearthProcess.binaryPath, "export", "--data-dir", dir.path + "/data", "--output", exported])
        let exportLines = export.output.split(separator: "\n")
        #expect(exportLines.first == "0", "\(export.output)")
        let exportPeak = try #require(exportLines.count > 1 ? Int(exportLines[1]) : nil)
        #expect(exportPeak < Self.importMemoryBoundBytes, "peak RSS \(exportPeak / 1_048_576) MiB")
        #expect(export.output.contains("exported \(items * 3) leaves"))
    }

    /// Writes `{"items":{"k0000000":{"text":"…1 KiB…","n":i,"even":true|false},…}}` of about
    /// `bytes` bytes; returns the number of items.
    static func generate(_ path: String, bytes: Int) throws -> Int {
        _ = FileManager.default.createFile(atPath: path, contents: nil)
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
        defer { try? handle.close() }
        let text = String(repeating: "lorem ipsum ", count: 85)
        var chunk = Data("{\"items\":{".utf8)
        var written = 0
        var items = 0
        while written + chunk.count < bytes {
            let key = String(items)
            let padded = "k" + String(repeating: "0", count: max(0, 7 - key.count)) + key
            chunk.append(contentsOf: "\(items == 0 ? "" : ",")\"\(padded)\":{\"text\":\"\(text)\",\"n\":\(items),\"even\":\(items % 2 == 0)}".utf8)
            items += 1
            if chunk.count > 1 << 20 {
                try handle.write(contentsOf: chunk)
                written += chunk.count
                chunk.removeAll(keepingCapacity: true)
            }
        }
        chunk.append(contentsOf: "}}".utf8)
        try handle.write(contentsOf: chunk)
        return items
    }

    // MARK: Users

    /// The user of the public scrypt vector (docs/protocol/auth.md §5.2) signs in over REST
    /// with the Firebase password; a wrong one is refused; afterwards the stored hash is
    /// Hearth's own (PHC).
    @Test func importedUsersSignInWithTheirFirebasePassword() throws {
        let file = dir.path + "/users.json"
        try #"{"users": [{"localId":"vectorUser","email":"user1@example.com","emailVerified":true,"passwordHash":"lSrfV15cpx95/sZS2W9c9Kp6i/LVgQNDNC/qzrCnh1SAyZvqmZqAjTdn3aoItz+VHjoZilo78198JAdRuid5lQ==","salt":"42xEC+ixf3L2lw==","createdAt":"1600000000000","providerUserInfo":[]}]}"#
            .write(toFile: file, atomically: true, encoding: .utf8)
        let parameters = ["--hash-key", FirebaseScryptVector.signerKey, "--salt-separator", "Bw==", "--rounds", "8", "--mem-cost", "14"]
        let missing = try hearth(["users", "import", file, "--data-dir", dir.path])
        #expect(missing.status == 1 && missing.error.contains("--hash-key"), "\(missing.error)")
        let imported = try hearth(["users", "import", file, "--data-dir", dir.path] + parameters)
        #expect(imported.status == 0, "\(imported.error)")
        #expect(imported.output.contains("imported 1 users: 1 with a password"))
        let database = dir.path + "/hearth.sqlite"
        #expect(try Self.sqlite(database, "SELECT password_hash FROM users WHERE uid = 'vectorUser'").hasPrefix("$firebase-scrypt$r=8,m=14$"))

        let server = try HearthProcess.serve(dataDirectory: dir.path)
        let exported = try hearth(["users", "export", "--data-dir", dir.path])
        #expect(exported.output.contains(#""passwordHash":"lSrfV15cpx95"#))
        let url = server.baseURL + "/v1/accounts:signInWithPassword?key=x"
        let wrong = try curl("POST", url, body: #"{"email":"user1@example.com","password":"user1passwore","returnSecureToken":true}"#,
                             headers: ["Content-Type: application/json"])
        #expect(wrong.status == 400 && wrong.body.contains("INVALID_LOGIN_CREDENTIALS"))
        let right = try curl("POST", url, body: #"{"email":"user1@example.com","password":"user1password","returnSecureToken":true}"#,
                             headers: ["Content-Type: application/json"])
        #expect(right.status == 200, "\(right.body)")
        let session = (json(right.body) as? [String: Any]) ?? [:]
        #expect(session["localId"] as? String == "vectorUser")
        #expect((session["idToken"] as? String)?.isEmpty == false)
        #expect(try Self.sqlite(database, "SELECT password_hash FROM users WHERE uid = 'vectorUser'").hasPrefix("$scrypt$ln=15,r=8,p=1$"))
        #expect(try !hearth(["users", "export", "--data-dir", dir.path]).output.contains("passwordHash"))
        let again = try curl("POST", url, body: #"{"email":"user1@example.com","password":"user1password"}"#, headers: ["Content-Type: application/json"])
        #expect(again.status == 200)
        server.signal(SIGTERM)
        #expect(try server.waitForExit() == 0)
    }
}

/// The public vector of firebase/scrypt's README (docs/protocol/auth.md §5.2).
enum FirebaseScryptVector {
    static let signerKey = "jxspr8Ki0RYycVU8zykbdLGjFQ3McFUH0uiiTvC8pVMXAn210wjLNmdZJzxUECKbm0QsEmYUSDzZvpjeJ9WmXA=="
}
