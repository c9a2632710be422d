import Foundation
import Testing

/// Every file Hearth writes is 0600 and every folder it makes 0700, even when the operator
/// made the data directory 0755 and the umask is the usual 022: the
/// database with its `-wal` and `-shm`, the signing keys, backups and exports.
@Suite struct FileModesEndToEndTests {
    let dir = TemporaryDirectory()

    /// Runs the binary under umask 022, standard error merged.
    func hearth(_ arguments: [String]) throws -> (status: Int32, output: String) {
        try Spawn.run("/bin/sh", ["-c", #"umask "$0" && exec "$@""#, "022", HearthProcess.binaryPath] + arguments,
                      input: nil, captureStderr: true)
    }

    static func mode(_ path: String) throws -> Int {
        try #require(try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int)
    }

    /// `path` and everything below it, with their modes, as "relative path: octal".
    static func modes(under path: String) throws -> [String] {
        var result: [String] = []
        for relative in try FileManager.default.subpathsOfDirectory(atPath: path).sorted() {
            result.append("\(relative): \(String(try mode(path + "/" + relative), radix: 8))")
        }
        return result
    }

    @Test func filesAre0600AndFolders0700UnderAPermissiveUmask() throws {
        let data = dir.path + "/data"
        try FileManager.default.createDirectory(atPath: data, withIntermediateDirectories: false)
        #expect(chmod(data, 0o755) == 0)
        let rules = dir.path + "/rules.json"
        try HearthProcess.openRules.write(toFile: rules, atomically: true, encoding: .utf8)
        let server = try HearthProcess(arguments: ["serve", "--port", "0", "--data-dir", data, "--rules", rules],
                                       dataDirectory: data, umask: "022")
        try server.waitUntilListening()
        #expect(try curl("PUT", server.baseURL + "/a.json", body: #"{"b":1}"#).status == 200)
        #expect(try curl("POST", server.baseURL + "/v1/accounts:signUp", body: #"{"email":"m@example.com","password":"secret1"}"#).status == 200)
        #expect(try hearth(["keys", "rotate", "--data-dir", data]).status == 0)
        let backup = dir.path + "/backup"
        #expect(try hearth(["backup", backup, "--data-dir", data]).status == 0)
        #expect(try hearth(["export", "--output", dir.path + "/export.json", "--data-dir", data]).status == 0)
        #expect(try hearth(["users", "export", "--output", dir.path + "/users.json", "--data-dir", data]).status == 0)

        let files = try Self.modes(under: data)
        for name in ["hearth.sqlite", "hearth.sqlite-wal", "hearth.sqlite-shm", "keys", "keys/current"] {
            #expect(files.contains { $0.hasPrefix(name + ": ") }, "\(name) missing: \(files)")
        }
        #expect(files.filter { $0.hasSuffix(".key: 600") }.count == 2, "\(files)")
        for entry in files {
            #expect(entry.hasSuffix(entry.hasPrefix("keys: ") ? ": 700" : ": 600"), "\(entry)")
        }
        #expect(try Self.mode(backup) == 0o700)
        for entry in try Self.modes(under: backup) {
            #expect(entry.hasSuffix(entry.hasPrefix("keys: ") ? ": 700" : ": 600"), "\(entry)")
        }
        #expect(try Self.mode(dir.path + "/export.json") == 0o600)
        #expect(try Self.mode(dir.path + "/users.json") == 0o600)
        // The operator's own folder is left as they made it.
        #expect(try Self.mode(data) == 0o755)
        server.signal(SIGTERM)
        #expect(try server.waitForExit() == 0)
    }

    /// A data directory that `serve` creates is 0700.
    @Test func aNewDataDirectoryIs0700() throws {
        let data = dir.path + "/new"
        let rules = dir.path + "/rules.json"
        try HearthProcess.openRules.write(toFile: rules, atomically: true, encoding: .utf8)
        let server = try HearthProcess(arguments: ["serve", "--port", "0", "--data-dir", data, "--rules", rules],
                                       dataDirectory: data, umask: "022")
        try server.waitUntilListening()
        #expect(try Self.mode(data) == 0o700)
        #expect(try Self.mode(data + "/hearth.sqlite") == 0o600)
        server.signal(SIGTERM)
        #expect(try server.waitForExit() == 0)
    }
}
