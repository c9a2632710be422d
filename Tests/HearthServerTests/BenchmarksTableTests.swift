import Foundation
import Testing

/// BENCHMARKS.md leads with one table of where Hearth stands, and each figure in it can be
/// traced and reproduced: every row names its date, its commit, a command whose script
/// exists, and the section of docs/bench/history.md it comes from (that the section
/// exists is DocumentationLinksTests' check). The dated runs live in the history, so
/// BENCHMARKS.md stays short.
@Suite struct BenchmarksTableTests {
    static let root = String(#filePath).components(separatedBy: "/Tests/")[0]

    /// The most lines BENCHMARKS.md may have: the table, how to run, and no dated runs.
    static let maxLines = 200

    /// The cells of the first table's rows, without its header and separator; group rows
    /// (a bold first cell and nothing else) left out.
    static func rows(of markdown: String) -> [[String]] {
        let lines = markdown.components(separatedBy: "\n")
        guard let header = lines.firstIndex(where: { $0.hasPrefix("| ") }) else { return [] }
        return lines[(header + 2)...].prefix { $0.hasPrefix("|") }.map { line in
            line.dropFirst().dropLast().components(separatedBy: "|").map { $0.trimmingCharacters(in: .whitespaces) }
        }.filter { !$0.dropFirst().allSatisfy(\.isEmpty) }
    }

    /// The `scripts/bench/…` paths a command names.
    static func scripts(in command: String) -> [String] {
        command.matches(of: /scripts\/bench\/[A-Za-z0-9_.]+/).map { String($0.output) }
    }

    @Test func everyFigureHasItsDateCommitCommandAndSource() throws {
        let text = try String(contentsOfFile: Self.root + "/BENCHMARKS.md", encoding: .utf8)
        #expect(text.components(separatedBy: "\n").count <= Self.maxLines)
        #expect(text.contains("## Where Hearth stands") && text.contains("## How to run"))
        let header = try #require(text.components(separatedBy: "\n").first { $0.hasPrefix("| ") })
        #expect(header == "| figure | Hearth | peer or limit | ratio | measured (UTC) | commit | command | details |")
        let rows = Self.rows(of: text)
        #expect(rows.count >= 30, "\(rows.count) rows")
        for row in rows {
            try #require(row.count == 8, "\(row)")
            #expect(row[4].wholeMatch(of: /2026-\d\d-\d\d( .*)?/) != nil, "date: \(row)")
            #expect(row[5].prefixMatch(of: /[0-9a-f]{7}\b/) != nil || row[5] == "not recorded", "commit: \(row)")
            #expect(row[6].hasPrefix("`"), "command: \(row)")
            let scripts = Self.scripts(in: row[6])
            #expect(!scripts.isEmpty || row[6].contains("RulesBench"), "command: \(row)")
            for script in scripts {
                #expect(FileManager.default.fileExists(atPath: Self.root + "/" + script), "no \(script): \(row)")
            }
            #expect(row[7].contains("](docs/bench/history.md#"), "source: \(row)")
        }
    }

    @Test func theCheckerReadsATable() {
        let markdown = """
            # B

            | figure | Hearth | x |
            |---|---|---|
            | **group** | | |
            | a | 1 | `scripts/bench/run` and `scripts/bench/wire.sh` |

            | other | table |
            """
        #expect(Self.rows(of: markdown) == [["a", "1", "`scripts/bench/run` and `scripts/bench/wire.sh`"]])
        #expect(Self.scripts(in: "`HEARTH_ONLY=1 scripts/bench/wire.sh` then scripts/bench/report.py") == ["scripts/bench/wire.sh", "scripts/bench/report.py"])
    }
}
