import Foundation
import Testing

/// What Hearth says it is, in `hearth --help` and in the README's status paragraph: both
/// name every surface it serves and both stores, and neither describes it as one SQLite
/// file any more.
@Suite struct OverviewEndToEndTests {
    /// The words each overview must contain (case-insensitive): the surfaces a user meets.
    static let surfaces = ["REST", "wire protocol", "console", "triggers", "namespaces", "SQLite", "PostgreSQL"]

    static func missing(in text: String) -> [String] {
        surfaces.filter { !text.localizedCaseInsensitiveContains($0) }
    }

    @Test func helpOverviewNamesEverySurface() throws {
        let (status, output) = try Spawn.run(HearthProcess.binaryPath, ["--help"], input: nil, captureStderr: true)
        #expect(status == 0, "\(output)")
        let overview = try #require(output.components(separatedBy: "USAGE:").first, "\(output)")
        #expect(Self.missing(in: overview) == [], "\(overview)")
        #expect(!overview.contains("one SQLite file"), "\(overview)")
        #expect(overview.contains("hearth serve"), "\(overview)")
    }

    @Test func readmeStatusNamesEverySurface() throws {
        let root = String(#filePath).components(separatedBy: "/Tests/")[0]
        let readme = try String(contentsOfFile: root + "/README.md", encoding: .utf8)
        let paragraphs = readme.components(separatedBy: "\n\n")
        let status = try #require(paragraphs.first { $0.hasPrefix("Status:") }, "no Status: paragraph in README.md")
        #expect(Self.missing(in: status) == [], "\(status)")
        #expect(!readme.contains("a JSON tree in one SQLite file"))
    }
}
