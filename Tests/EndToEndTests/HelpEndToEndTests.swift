import Foundation
import HearthJSON
import Testing

/// `--help` helps before anything is checked: every command of the built binary, found in
/// its own command tree (`--experimental-dump-help`, swift-argument-parser's description of
/// every command), prints its usage and exits 0 in an empty directory, where the default
/// data directory `./hearth-data` does not exist and no `HEARTH_*` variable is set. A
/// failure found while validating (the missing data directory) must not be printed first.
@Suite struct HelpEndToEndTests {
    /// Every command's path below `hearth` (`["users", "add"]`), the root's `[]` first.
    static func commandPaths() throws -> [[String]] {
        let dump = try Spawn.run(HearthProcess.binaryPath, ["--experimental-dump-help"], input: nil)
        guard dump.status == 0, case .object(let top) = try JSONParser.parse(Array(dump.output.utf8)),
              case .object(let root)? = top["command"] else {
            throw HelpTreeError(output: dump.output)
        }
        var paths: [[String]] = []
        func walk(_ command: [JSONKey: JSONValue], _ path: [String]) {
            paths.append(path)
            guard case .array(let children)? = command["subcommands"] else { return }
            for case .object(let child) in children {
                guard case .string(let name)? = child["commandName"] else { continue }
                walk(child, path + [name])
            }
        }
        walk(root, [])
        return paths
    }

    struct HelpTreeError: Error, CustomStringConvertible {
        let output: String
        var description: String { "hearth --experimental-dump-help gave no command tree: \(output.prefix(500))" }
    }

    @Test func everyCommandsHelpComesFirstAndSucceeds() throws {
        let paths = try Self.commandPaths()
        // The tree is the binary's: the commands the issue named are in it, so an empty or
        // truncated walk fails here rather than passing over nothing.
        for expected in [["token"], ["export"], ["users", "add"], ["users", "import"], ["admins", "add"], ["admins", "list"],
                         ["triggers", "list"], ["triggers", "park"], ["keys", "rotate"], ["restore"], ["serve"]] {
            #expect(paths.contains(expected), "\(expected) not in \(paths)")
        }
        let empty = TemporaryDirectory()
        let environment = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("HEARTH_") }
        for path in paths {
            let result = try Spawn.run(HearthProcess.binaryPath, path + ["--help"], input: nil, captureStderr: true,
                                       currentDirectory: empty.path, environment: environment)
            #expect(result.status == 0, "hearth \(path.joined(separator: " ")) --help: \(result.output)")
            // `hearth help --help` is the help command's own help: the overview of hearth.
            let usage = path == ["help"] ? "USAGE: hearth <subcommand>" : "USAGE: hearth" + path.map { " " + $0 }.joined()
            #expect(result.output.contains(usage), "hearth \(path) --help: \(result.output)")
            #expect(!result.output.contains("Error:"), "hearth \(path.joined(separator: " ")) --help: \(result.output)")
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: empty.path).isEmpty)
    }

    /// The same commands without `--help` still refuse the missing data directory, so the
    /// help above was printed in place of that refusal, not because nothing checks.
    @Test(arguments: [["token", "--admin"], ["export"], ["users", "list"], ["admins", "list"], ["triggers", "list"], ["keys", "rotate"]])
    func withoutHelpTheMissingDataDirectoryIsRefused(command: [String]) throws {
        let empty = TemporaryDirectory()
        let environment = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("HEARTH_") }
        let result = try Spawn.run(HearthProcess.binaryPath, command, input: "", captureStderr: true,
                                   currentDirectory: empty.path, environment: environment)
        #expect(result.status == 1, "\(result.output)")
        #expect(result.output.contains("Error: Data directory ./hearth-data does not exist"), "\(result.output)")
        #expect(!result.output.contains("USAGE:"), "\(result.output)")
    }
}
