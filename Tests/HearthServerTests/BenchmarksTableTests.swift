import Foundation
import Testing

/// BENCHMARKS.md leads with one table of where Hearth stands, and each figure in it can be
/// traced and reproduced: every row names its date, the machine's load before the run,
/// the server's and the load generator's CPU during it (or says they were not recorded),
/// its commit, a command whose script exists, and the section of docs/bench/history.md it
/// comes from (that the section
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

    /// A load-before cell: a load average (it starts with one), or "not recorded".
    static func isLoad(_ cell: String) -> Bool {
        cell == "not recorded" || cell.prefixMatch(of: /~?\d+(\.\d\d?)?\b/) != nil
    }

    /// A CPU cell: "not recorded", or the figures the run recorded, each named (so it has a
    /// digit and a word), or a benchmark with no load generator saying so.
    static func isCPU(_ cell: String) -> Bool {
        cell == "not recorded" || cell.hasPrefix("no load generator")
            || (cell.contains { $0.isNumber } && cell.contains { $0.isLetter })
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
        #expect(header == "| figure | Hearth | peer or limit | ratio | measured (UTC) | load before | CPU, % of a core: server, load generator | commit | command | details |")
        let rows = Self.rows(of: text)
        #expect(rows.count >= 30, "\(rows.count) rows")
        for row in rows {
            try #require(row.count == 10, "\(row)")
            #expect(row[4].wholeMatch(of: /2026-\d\d-\d\d( .*)?/) != nil, "date: \(row)")
            #expect(Self.isLoad(row[5]), "load before: \(row)")
            #expect(Self.isCPU(row[6]), "CPU: \(row)")
            #expect(row[7].prefixMatch(of: /[0-9a-f]{7}\b/) != nil || row[7] == "not recorded", "commit: \(row)")
            #expect(row[8].hasPrefix("`"), "command: \(row)")
            let scripts = Self.scripts(in: row[8])
            #expect(!scripts.isEmpty || row[8].contains("RulesBench"), "command: \(row)")
            for script in scripts {
                #expect(FileManager.default.fileExists(atPath: Self.root + "/" + script), "no \(script): \(row)")
            }
            #expect(row[9].contains("](docs/bench/history.md#"), "source: \(row)")
        }
    }

    /// The files that may name a benchmark section: sources, docs, scripts, the README.
    static func citingFiles() throws -> [String] {
        var files = ["README.md"]
        for folder in ["Sources", "docs", "scripts"] {
            let paths = try FileManager.default.subpathsOfDirectory(atPath: root + "/" + folder)
            files += paths.filter { path in [".swift", ".md", ".sh", ".py", "bench/run"].contains { path.hasSuffix($0) } }
                .map { folder + "/" + $0 }
        }
        return files.filter { $0 != "docs/bench/history.md" }.sorted()
    }

    /// The section names a text cites as `docs/bench/history.md, "Name"` (or `("Name")`,
    /// and `and "Other"` after it), with comment markers and line breaks inside a name
    /// joined into single spaces.
    static func citedSections(in text: String) -> [String] {
        let joined = text.replacing(/\n\s*(?:\/\/\/?|#)?\s*/, with: " ")
        var names: [String] = []
        for match in joined.matches(of: /docs\/bench\/history\.md,? \(?"([^"]+)"(?: and "([^"]+)")?/) {
            names.append(String(match.output.1))
            if let other = match.output.2 { names.append(String(other)) }
        }
        return names
    }

    /// Every benchmark section a source, doc or script names is a heading of the history
    /// (a heading that contains the name), and none is still cited in BENCHMARKS.md, which
    /// has no dated sections any more.
    @Test func everyCitedSectionIsInTheHistory() throws {
        let history = try String(contentsOfFile: Self.root + "/docs/bench/history.md", encoding: .utf8)
        let headings = history.components(separatedBy: "\n").filter { $0.hasPrefix("#") }.map { $0.lowercased() }
        var cited = 0
        for file in try Self.citingFiles() {
            let text = try String(contentsOfFile: Self.root + "/" + file, encoding: .utf8)
            for name in Self.citedSections(in: text) {
                cited += 1
                #expect(headings.contains { $0.contains(name.lowercased()) }, "\(file): no heading \"\(name)\" in docs/bench/history.md")
            }
            #expect(text.firstMatch(of: /BENCHMARKS(\.md)?,? \(?"/) == nil, "\(file) cites a section of BENCHMARKS.md")
        }
        #expect(cited >= 15, "\(cited) citations found")
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
        #expect(Self.citedSections(in: "a (docs/bench/history.md, \"How it got\n    // there\": x) b docs/bench/history.md (\"C\") and docs/bench/history.md, \"D\" and \"E\".")
                == ["How it got there", "C", "D", "E"])
    }

    @Test func theLoadAndCPUCellsSayWhatTheRunRecorded() {
        for load in ["0.41", "~1.4", "8–11", "0.89–3.71 before a run", "not recorded"] {
            #expect(Self.isLoad(load), "\(load)")
        }
        for load in ["", "quiet", "busy: 2.1", "recorded"] {
            #expect(!Self.isLoad(load), "\(load)")
        }
        for cpu in ["Hearth 132, wrk 16", "no load generator (in process)", "not recorded"] {
            #expect(Self.isCPU(cpu), "\(cpu)")
        }
        for cpu in ["", "132", "Hearth", "–"] {
            #expect(!Self.isCPU(cpu), "\(cpu)")
        }
    }
}
