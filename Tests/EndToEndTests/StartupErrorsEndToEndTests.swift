import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// What `hearth serve` says when it cannot start, with the built binary: each refusal names
/// what failed and what to do about it (the flag, the file to create, the owner to give the
/// directory), and a second server on a served data directory and its port is told the
/// directory is served, by which pid, rather than that the port is taken.
@Suite struct StartupErrorsEndToEndTests {
    let dir = TemporaryDirectory()

    /// `hearth serve` on a fresh SQLite data directory (never the PostgreSQL test store:
    /// these tests are about the local directory), `listening` waited for.
    func serve(_ data: String, port: Int = 0, environment: [String: String] = [:]) throws -> HearthProcess {
        let rules = try HearthProcess.writeRules(HearthProcess.openRules, in: dir.path)
        let child = try HearthProcess(arguments: ["serve", "--port", String(port), "--data-dir", data, "--rules", rules],
                                      dataDirectory: data, environment: environment)
        try child.waitUntilListening()
        return child
    }

    /// A `serve` expected to fail: its exit status and everything it printed.
    func failingServe(_ arguments: [String]) throws -> (status: Int32, log: String) {
        let child = try HearthProcess(arguments: ["serve"] + arguments, dataDirectory: dir.path)
        let status = try child.waitForExit()
        #expect(!child.log.contains("listening on http://"), "\(child.log)")
        return (status, child.log)
    }

    @Test func aMissingRulesFileSaysHowToMakeOne() throws {
        let missing = dir.path + "/rules.json"
        let result = try failingServe(["--port", "0", "--data-dir", dir.path + "/data", "--rules", missing])
        #expect(result.status == 1)
        #expect(result.log.contains("cannot read rules file \(missing): No such file or directory"), "\(result.log)")
        #expect(result.log.contains("Point --rules (HEARTH_RULES) at your rules file, or create \(missing)"), "\(result.log)")
        #expect(result.log.contains(#"{"rules": {".read": false, ".write": false}}"#), "\(result.log)")
        #expect(result.log.contains("'hearth rules check \(missing)'"), "\(result.log)")
        // The rules the message offers are a file the server starts with.
        try #"{"rules": {".read": false, ".write": false}}"#.write(toFile: missing, atomically: true, encoding: .utf8)
        let started = try HearthProcess(arguments: ["serve", "--port", "0", "--data-dir", dir.path + "/data", "--rules", missing],
                                        dataDirectory: dir.path + "/data")
        try started.waitUntilListening()
        started.signal(SIGTERM)
        #expect(try started.waitForExit() == 0)
    }

    @Test func aPortInUseNamesThePortAndTheFlagToChooseAnother() throws {
        let first = try serve(dir.path + "/first")
        let rules = dir.path + "/rules.json"
        let result = try failingServe(["--port", String(first.port), "--data-dir", dir.path + "/second", "--rules", rules])
        #expect(result.status == 1)
        #expect(result.log.contains("cannot listen on 127.0.0.1:\(first.port): port \(first.port) is already in use by another process"),
                "\(result.log)")
        #expect(result.log.contains("choose another port with --port (HEARTH_PORT)"), "\(result.log)")
        #expect(!FileManager.default.fileExists(atPath: dir.path + "/second"))
        first.signal(SIGTERM)
        #expect(try first.waitForExit() == 0)
    }

    /// Same directory and same port: the directory's lock is tried first, so the refusal
    /// names the server already there (the port would only say "in use").
    @Test func aSecondServerOnTheSameDirectoryAndPortIsToldWhoServesIt() throws {
        let data = dir.path + "/data"
        let first = try serve(data)
        let result = try failingServe(["--port", String(first.port), "--data-dir", data, "--rules", dir.path + "/rules.json"])
        #expect(result.status == 1)
        let pid = first.process.processIdentifier
        #expect(result.log.contains("data directory \(data) is already served by another Hearth process (pid \(pid): hearth serve)"),
                "\(result.log)")
        #expect(!result.log.contains("cannot listen"), "\(result.log)")
        // The first one serves on.
        #expect(try curl("PUT", first.baseURL + "/a.json", body: "1").status == 200)
        first.signal(SIGTERM)
        #expect(try first.waitForExit() == 0)
    }

    /// A data directory the server's user cannot write: the message names the directory,
    /// the user, and the command that fixes it. Root may write anywhere, so as root the
    /// server runs as `nobody` (uid 65534, through `setpriv`, as systemd's `User=` runs it
    /// as `hearth`) over root's directories, mode 0755: the kernel refuses it with EACCES.
    /// As another user the directories are made 0555 instead.
    @Test func anUnwritableDataDirectoryNamesTheUserAndTheFix() throws {
        let asRoot = getuid() == 0
        let setpriv = "/usr/bin/setpriv"
        if asRoot {
            try #require(FileManager.default.isExecutableFile(atPath: setpriv), "running as root, this test needs setpriv to drop to nobody")
        }
        let uid = asRoot ? 65534 : geteuid()
        let name = asRoot ? "nobody" : (getpwuid(uid).map { String(cString: $0.pointee.pw_name) } ?? String(uid))
        let user = "user \(name) (uid \(uid))"
        chmod(dir.path, 0o755)  // mkdtemp's 0700 would keep `nobody` out of everything below
        let rules = try HearthProcess.writeRules(HearthProcess.openRules, in: dir.path)
        chmod(rules, 0o644)
        let parent = dir.path + "/root-owned"
        let existing = parent + "/existing"
        let locked = parent + "/served-by-root"
        for path in [parent, existing, locked] {
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false)
        }
        // A directory root once served: its lock file is root's, mode 0600.
        #expect(FileManager.default.createFile(atPath: locked + "/hearth.lock", contents: nil, attributes: [.posixPermissions: 0o600]))
        for path in [existing, locked, parent] { chmod(path, asRoot ? 0o755 : 0o555) }
        defer { for path in [parent, existing, locked] { chmod(path, 0o755) } }

        func serve(_ data: String) throws -> (status: Int32, output: String) {
            let child = try HearthProcess(arguments: ["serve", "--port", "0", "--data-dir", data, "--rules", rules], dataDirectory: data,
                                          launcher: asRoot ? [setpriv, "--reuid=65534", "--regid=65534", "--clear-groups", "--"] : [])
            return (try child.waitForExit(), child.log)
        }

        for data in [existing, locked] {
            let result = try serve(data)
            #expect(result.status == 1, "\(result.output)")
            #expect(result.output.contains("data directory \(data) is not writable by \(user), the user Hearth runs as (Permission denied)"),
                    "\(result.output)")
            #expect(result.output.contains("chown -R \(name) \(data) && chmod 0700 \(data)"), "\(result.output)")
            #expect(result.output.contains("or choose another directory with --data-dir (HEARTH_DATA_DIR)"), "\(result.output)")
            #expect(!result.output.contains("errno"), "\(result.output)")
            #expect(!result.output.contains("listening on http://"), "\(result.output)")
        }
        // Not there yet, under a parent the user cannot write: how to create it for them.
        let missing = parent + "/new"
        let result = try serve(missing)
        #expect(result.status == 1, "\(result.output)")
        #expect(result.output.contains("cannot create data directory \(missing): its parent \(parent) is not writable by \(user)"),
                "\(result.output)")
        #expect(result.output.contains("install -d -m 0700 -o \(name) \(missing)"), "\(result.output)")
        #expect(!FileManager.default.fileExists(atPath: missing))
    }
}

extension StartupErrorsEndToEndTests {
    /// A data directory on a read-only file system: the server runs in a mount namespace of
    /// its own (`unshare -m`; `-r` too when not root) where the directory is bind-mounted
    /// read-only, so the kernel answers EROFS; the message says to choose a writable one.
    @Test func aReadOnlyDataDirectorySaysToChooseAWritableOne() throws {
        let unshare = "/usr/bin/unshare"
        try #require(FileManager.default.isExecutableFile(atPath: unshare), "this test needs unshare for a read-only bind mount")
        let data = dir.path + "/data"
        try FileManager.default.createDirectory(atPath: data, withIntermediateDirectories: false)
        let rules = try HearthProcess.writeRules(HearthProcess.openRules, in: dir.path)
        let remount = #"mount --bind "$0" "$0" && mount -o remount,bind,ro "$0" && exec "$@""#
        let child = try HearthProcess(arguments: ["serve", "--port", "0", "--data-dir", data, "--rules", rules], dataDirectory: data,
                                      launcher: [unshare, getuid() == 0 ? "-m" : "-rm", "--", "/bin/sh", "-c", remount, data])
        #expect(try child.waitForExit() == 1, "\(child.log)")
        #expect(child.log.contains("data directory \(data) is on a read-only file system (Read-only file system): "
                                   + "choose another directory with --data-dir (HEARTH_DATA_DIR) on a writable one"), "\(child.log)")
        #expect(!child.log.contains("listening on http://"), "\(child.log)")
        // Outside the child's namespace the directory stayed writable and empty.
        #expect(try FileManager.default.contentsOfDirectory(atPath: data).isEmpty)
    }
}
