import Foundation
import Testing

/// What operator commands tell a newcomer, with the built binary: a restore onto an existing
/// database is refused naming `--force` (and goes ahead with it), and the administrators'
/// shortest password is the one `hearth admins add --help` states: one character less is
/// refused, that many are taken.
@Suite struct OperatorMessagesEndToEndTests {
    let dir = TemporaryDirectory()

    func hearth(_ arguments: [String], input: String? = nil) throws -> (status: Int32, output: String) {
        let environment = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("HEARTH_") }
        return try Spawn.run(HearthProcess.binaryPath, arguments, input: input, captureStderr: true, environment: environment)
    }

    @Test func restoreOntoADatabaseNamesForce() throws {
        let data = dir.path + "/data"
        try FileManager.default.createDirectory(atPath: data, withIntermediateDirectories: false)
        #expect(try hearth(["import", "-", "--data-dir", data], input: #"{"a": 1}"#).status == 0)
        let backup = dir.path + "/backup"
        #expect(try hearth(["backup", backup, "--data-dir", data]).status == 0)
        #expect(try hearth(["import", "-", "--data-dir", data], input: #"{"a": 2}"#).status == 0)

        let refused = try hearth(["restore", backup, "--data-dir", data])
        #expect(refused.status == 1, "\(refused.output)")
        #expect(refused.output.contains("Error: \(data)/hearth.sqlite already exists; refusing to overwrite it. "
                                        + "To replace it with the backup, run the same command with --force"), "\(refused.output)")
        #expect(try hearth(["export", "--data-dir", data]).output.contains(#""a":2"#))

        let forced = try hearth(["restore", backup, "--data-dir", data, "--force"])
        #expect(forced.status == 0, "\(forced.output)")
        #expect(try hearth(["export", "--data-dir", data]).output.contains(#""a":1"#))
    }

    @Test(arguments: [["admins", "add"], ["admins", "set-password"]])
    func theAdministratorPasswordMinimumIsInTheHelp(command: [String]) throws {
        let help = try hearth(command + ["--help"]).output
        let match = try #require(help.firstMatch(of: /It needs at least ([0-9]+) characters\./), "\(help)")
        let minimum = try #require(Int(match.1))
        #expect(minimum >= 8, "\(help)")

        let data = dir.path + "/data"
        try FileManager.default.createDirectory(atPath: data, withIntermediateDirectories: false)
        let short = String(repeating: "p", count: minimum - 1)
        let enough = String(repeating: "p", count: minimum)
        let email = ["--email", "ops@example.com", "--data-dir", data]
        let refused = try hearth(["admins", "add"] + email, input: short + "\n")
        #expect(refused.status == 1 && refused.output.contains("needs at least \(minimum) characters"), "\(refused.output)")
        #expect(try hearth(["admins", "add"] + email, input: enough + "\n").status == 0)
        let target = ["ops@example.com", "--data-dir", data]
        let shortReset = try hearth(["admins", "set-password"] + target, input: short + "\n")
        #expect(shortReset.status == 1 && shortReset.output.contains("needs at least \(minimum) characters"), "\(shortReset.output)")
        #expect(try hearth(["admins", "set-password"] + target, input: enough + "q\n").status == 0)
    }
}
