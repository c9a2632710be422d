import Foundation
import Testing

/// The `hearth` command line as a newcomer meets it: `--version`, operator commands that
/// refuse a missing data directory, a `serve` that cannot bind and leaves nothing behind,
/// usage errors that show the subcommand's own usage, a description for every subcommand,
/// one error style, and the password prompt on a terminal.
@Suite struct CLIEndToEndTests {
    let dir = TemporaryDirectory()

    /// Runs the binary with standard error merged into the output.
    func hearth(_ arguments: [String], input: String? = nil) throws -> (status: Int32, output: String) {
        try Spawn.run(HearthProcess.binaryPath, arguments, input: input, captureStderr: true)
    }

    /// Every error line the CLI prints has swift-argument-parser's form: `Error: ` and a
    /// capital letter (or an option name).
    static func expectErrorStyle(_ output: String, sourceLocation: SourceLocation = #_sourceLocation) {
        let errors = output.split(separator: "\n").filter { $0.lowercased().hasPrefix("error") }
        #expect(!errors.isEmpty, "no error line in \(output)", sourceLocation: sourceLocation)
        for line in errors {
            let first = line.dropFirst("Error: ".count).first
            #expect(line.hasPrefix("Error: ") && (first?.isUppercase == true || first == "-"), "\(line)", sourceLocation: sourceLocation)
        }
    }

    @Test func versionPrintsTheVersion() throws {
        let result = try hearth(["--version"])
        #expect(result.status == 0)
        let version = result.output.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(version.wholeMatch(of: /[0-9]+\.[0-9]+\.[0-9]+/) != nil, "\(result.output)")
    }

    /// Only `serve` and `restore` create a data directory; every other operator command
    /// refuses a missing one, naming it, and creates nothing.
    @Test(arguments: [
        ["users", "list"], ["users", "add", "--email", "a@example.com"], ["users", "disable", "u1"],
        ["users", "enable", "u1"], ["users", "delete", "u1"], ["users", "set-password", "u1"], ["users", "revoke", "u1"],
        ["users", "import", "-"], ["users", "export"], ["token", "--admin"], ["token", "--uid", "u1"], ["keys", "rotate"],
        ["backup", "BACKUP"], ["export"], ["import", "-"],
    ])
    func operatorCommandsRefuseAMissingDataDirectory(command: [String]) throws {
        let missing = dir.path + "/typo"
        let arguments = command.map { $0 == "BACKUP" ? dir.path + "/backup" : $0 } + ["--data-dir", missing]
        let result = try hearth(arguments, input: "pw-123456\n")
        #expect(result.status == 1, "\(result.output)")
        #expect(result.output.contains("Error: Data directory \(missing) does not exist"), "\(result.output)")
        #expect(!FileManager.default.fileExists(atPath: missing))
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.path).isEmpty)
    }

    /// Users, administrators, signing keys and tokens are per server, kept with the default
    /// namespace's data: every command on them refuses `--ns` as a usage error saying so,
    /// before opening anything (no namespace database, no account written anywhere), and
    /// their help does not offer it.
    @Test(arguments: [
        ["users", "list"], ["users", "add", "--email", "a@example.com"], ["users", "disable", "u1"],
        ["users", "enable", "u1"], ["users", "delete", "u1"], ["users", "set-password", "u1"], ["users", "revoke", "u1"],
        ["users", "reset-link", "--email", "a@example.com"], ["users", "import", "-"], ["users", "export"],
        ["admins", "list"], ["admins", "add", "--email", "a@example.com"], ["admins", "remove", "a@example.com"],
        ["admins", "set-password", "a@example.com"], ["token", "--admin"], ["token", "--uid", "u1"],
        ["token", "--uid", "u1", "--custom"], ["keys", "rotate"],
    ])
    func accountCommandsRefuseANamespace(command: [String]) throws {
        let result = try hearth(command + ["--data-dir", dir.path, "--ns", "shop"], input: #"{"users": []}"# + "\n")
        #expect(result.status == 64, "\(result.output)")
        #expect(result.output.contains("Error: --ns is not taken here: users, administrators, signing keys and tokens are per server"),
                "\(result.output)")
        #expect(result.output.contains("leave out --ns"), "\(result.output)")
        Self.expectErrorStyle(result.output)
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.path).isEmpty)
        let subcommand = Array(command.prefix(command[0] == "token" ? 1 : 2))
        #expect(!(try hearth(subcommand + ["--help"]).output.contains("--ns")), "\(subcommand)")
    }

    /// `restore` creates a missing data directory only for a restore that
    /// succeeds: a missing backup, or a file that is no Hearth database, leaves nothing.
    @Test func aFailedRestoreLeavesNoDataDirectory() throws {
        let missing = dir.path + "/new"
        let none = try hearth(["restore", dir.path + "/no-backup", "--data-dir", missing])
        #expect(none.status == 1 && none.output.contains("Error: No such file or directory: \(dir.path)/no-backup"), "\(none.output)")
        #expect(!FileManager.default.fileExists(atPath: missing))
        let junk = dir.path + "/junk.sqlite"
        try Data("not a database".utf8).write(to: URL(fileURLWithPath: junk))
        let bad = try hearth(["restore", junk, "--data-dir", missing])
        #expect(bad.status == 1 && bad.output.contains("Error: \(junk) failed PRAGMA integrity_check"), "\(bad.output)")
        #expect(!FileManager.default.fileExists(atPath: missing))
    }

    /// A `serve` whose port is taken exits 1 and creates nothing: no data directory, or
    /// nothing in an existing empty one (no database, no signing keys).
    @Test func aServeThatCannotBindCreatesNothing() throws {
        let first = try HearthProcess.serve(dataDirectory: dir.path)
        let folder = TemporaryDirectory()
        let rules = try HearthProcess.writeRules(HearthProcess.openRules, in: folder.path)
        let empty = folder.path + "/empty"
        try FileManager.default.createDirectory(atPath: empty, withIntermediateDirectories: false)
        for data in [folder.path + "/new", empty] {
            let result = try hearth(["serve", "--port", String(first.port), "--data-dir", data, "--rules", rules])
            #expect(result.status == 1, "\(result.output)")
            #expect(result.output.contains("cannot listen on 127.0.0.1:\(first.port)"), "\(result.output)")
        }
        #expect(!FileManager.default.fileExists(atPath: folder.path + "/new"))
        #expect(try FileManager.default.contentsOfDirectory(atPath: empty).isEmpty)
        first.signal(SIGTERM)
        #expect(try first.waitForExit() == 0)
    }

    /// Errors found after parsing (a bad `--claims`, `--path`, setting or hash option) print
    /// the subcommand's usage, not the top-level one.
    @Test(arguments: [
        (["token", "--uid", "u1", "--claims", "[1]"], "Usage: hearth token "),
        (["export", "--path", "a.b"], "Usage: hearth export "),
        (["import", "-", "--path", "a.b"], "Usage: hearth import "),
        (["serve", "--port", "abc"], "Usage: hearth serve "),
        (["serve", "--synchronous", "sometimes"], "Usage: hearth serve "),
        (["users", "import", "-", "--hash-key", "!", "--salt-separator", "!", "--rounds", "8", "--mem-cost", "14"], "Usage: hearth users import "),
        (["token", "--uid", "u1", "--ttl", "3601"], "Usage: hearth token "),
    ])
    func usageErrorsShowTheSubcommandsUsage(arguments: [String], usage: String) throws {
        let result = try hearth(arguments + ["--data-dir", dir.path])
        #expect(result.status == 64, "\(result.output)")
        #expect(result.output.contains(usage), "\(result.output)")
        #expect(!result.output.contains("Usage: hearth <subcommand>"), "\(result.output)")
        Self.expectErrorStyle(result.output)
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.path).isEmpty)
    }

    /// Runtime errors share the style: `users delete` of an unknown uid, `token` for one.
    @Test func runtimeErrorsShareTheStyle() throws {
        for arguments in [["users", "delete", "nobody"], ["token", "--uid", "nobody"], ["users", "add", "--email", "bad"]] {
            let result = try hearth(arguments + ["--data-dir", dir.path], input: "pw-123456\n")
            #expect(result.status == 1, "\(result.output)")
            Self.expectErrorStyle(result.output)
        }
    }

    /// `--help` of every command group lists each subcommand with a description.
    @Test(arguments: [[], ["users"], ["rules"], ["keys"]])
    func everySubcommandHasADescription(group: [String]) throws {
        let help = try hearth(group + ["--help"]).output
        let lines = help.components(separatedBy: "\n")
        let start = try #require(lines.firstIndex(of: "SUBCOMMANDS:"), "\(help)")
        let entries = lines[(start + 1)...].prefix { !$0.isEmpty }.filter { $0.hasPrefix("  ") && !$0.hasPrefix("   ") }
        #expect(!entries.isEmpty)
        for entry in entries {
            let words = entry.split(separator: " ", omittingEmptySubsequences: true)
            #expect(words.count > 1, "no description: \(entry)")
        }
    }

    /// On a terminal `users add` asks for the password twice without echo; a mismatch
    /// creates nobody; the password given works for signing in.
    @Test func usersAddPromptsOnATerminal() throws {
        let data = dir.path
        let first = try HearthProcess.serve(dataDirectory: data)
        let mismatch = try Self.onTerminal(["users", "add", "--email", "ann@example.com", "--data-dir", data], answers: ["pw-first", "pw-other"])
        #expect(mismatch.status == 1, "\(mismatch.output)")
        #expect(mismatch.output.contains("Error: The passwords do not match"), "\(mismatch.output)")
        #expect(!mismatch.output.contains("pw-first") && !mismatch.output.contains("pw-other"), "echoed: \(mismatch.output)")

        let added = try Self.onTerminal(["users", "add", "--email", "ann@example.com", "--data-dir", data], answers: ["pw-secret-1", "pw-secret-1"])
        #expect(added.status == 0, "\(added.output)")
        #expect(added.output.contains("Password: ") && added.output.contains("Repeat password: "), "\(added.output)")
        #expect(!added.output.contains("pw-secret-1"), "echoed: \(added.output)")
        let signIn = try curl("POST", first.baseURL + "/v1/accounts:signInWithPassword",
                              body: #"{"email":"ann@example.com","password":"pw-secret-1","returnSecureToken":true}"#)
        #expect(signIn.status == 200, "\(signIn.body)")
        first.signal(SIGTERM)
        #expect(try first.waitForExit() == 0)
    }

    /// Runs the binary on a new pseudo-terminal (Python's `pty`), typing each answer only
    /// after its prompt appeared, so a missing prompt or an echo shows in the output.
    static func onTerminal(_ arguments: [String], answers: [String]) throws -> (status: Int32, output: String) {
        let driver = #"""
        import os, pty, select, sys
        answers = sys.argv[1].split("\n")
        pid, fd = pty.fork()
        if pid == 0:
            os.execv(sys.argv[2], sys.argv[2:])
        out = b""
        def read_until(token):
            global out
            while token is None or token not in out:
                ready, _, _ = select.select([fd], [], [], 60)
                if not ready:
                    break
                try:
                    chunk = os.read(fd, 1024)
                except OSError:
                    break
                if not chunk:
                    break
                out += chunk
        for prompt, answer in zip([b"Password: ", b"Repeat password: "], answers):
            read_until(prompt)
            os.write(fd, answer.encode() + b"\n")
        read_until(None)
        _, status = os.waitpid(pid, 0)
        sys.stdout.write(out.decode("utf-8", "replace"))
        sys.exit(os.waitstatus_to_exitcode(status))
        """#
        return try Spawn.run("/usr/bin/python3", ["-c", driver, answers.joined(separator: "\n"), HearthProcess.binaryPath] + arguments,
                             input: nil, captureStderr: true)
    }
}
