import ArgumentParser
import Foundation
import HearthJSON
import HearthRules
import HearthServer

/// `hearth rules check|test`: work with rules files without a server.
struct Rules: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Check rules files and run rule test cases.",
        subcommands: [Check.self, Test.self]
    )

    struct Check: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Compile a rules file; print every error with its line and column.",
            discussion: "Exit status 0 when the file is valid, 1 when it is not.")

        @Argument(help: "The rules file (Firebase database.rules.json format; comments allowed).")
        var file: String?

        @Option(name: .customLong("namespaces-file"), help: "Check the rules files of a namespaces file (docs/namespaces.md) instead.")
        var namespacesFile: String?

        @Option(name: .customLong("ns"), help: "With --namespaces-file: check only this namespace's rules file.")
        var namespace: String?

        func validate() throws {
            guard (file == nil) != (namespacesFile == nil) else { throw ValidationError("give a rules file or --namespaces-file") }
            if namespace != nil && namespacesFile == nil { throw ValidationError("--ns needs --namespaces-file") }
        }

        func run() throws {
            var files = file.map { [$0] } ?? []
            if let namespacesFile {
                let listed: NamespacesFile
                do {
                    listed = try NamespacesFile.load(namespacesFile)
                } catch {
                    print(error.description)
                    throw ExitCode(1)
                }
                if let namespace {
                    guard let path = listed.namespaces[namespace] else {
                        print("\(namespacesFile): no namespace \(namespace)")
                        throw ExitCode(1)
                    }
                    files = [path]
                } else {
                    files = listed.namespaces.keys.sorted().compactMap { listed.namespaces[$0] }
                }
            }
            var failed = false
            for file in files {
                do {
                    _ = try RulesLoader.load(file)
                    print("\(file): ok")
                } catch {
                    print(error.description)
                    failed = true
                }
            }
            if failed { throw ExitCode(1) }
        }
    }

    struct Test: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Run rule test cases (the conformance case format) and report failures.",
            discussion: """
                Each file is a JSON array of cases: {"id", "rules", "data", "auth", "op": \
                "read"|"set"|"update", "path", "value"|"updates", "expect": "allow"|"deny"}. \
                Prints one line per failing case and ends with 'N passed, N failed'; exits 1 \
                on any failure.

                With --rules, every case is decided by that rules file (a case's own \
                "rules" may then be left out), and --coverage / --min-coverage report which \
                of its expressions the cases evaluated, as the server's /.inspect/coverage \
                does (docs/rules.md, "Coverage"): exit 1 when the share of expressions \
                evaluated at least once is below --min-coverage.
                """)

        @Argument(help: "One or more case files.")
        var files: [String]

        @Flag(help: "For every case, print which rule at which path allowed or denied.")
        var explain = false

        @Option(help: "Decide every case with this rules file instead of the case's own rules.")
        var rules: String?

        @Option(help: ArgumentHelp("Write the rules coverage report of --rules to FILE: JSON when FILE ends in .json, else HTML.", valueName: "FILE"))
        var coverage: String?

        @Option(name: .customLong("min-coverage"),
                help: ArgumentHelp("Exit 1 unless at least N percent of the expressions of --rules were evaluated.", valueName: "N"))
        var minCoverage: Double?

        func validate() throws {
            if rules == nil && (coverage != nil || minCoverage != nil) {
                throw ValidationError("--coverage and --min-coverage need --rules FILE: the report is about one rules file")
            }
            if let minCoverage, !(0...100).contains(minCoverage) { throw ValidationError("--min-coverage is a percentage, 0 to 100") }
        }

        func run() throws {
            var ruleSet: RuleSet?
            if let rules {
                do {
                    ruleSet = try RulesLoader.load(rules).withCoverage()
                } catch let error as RulesLoader.LoadError {
                    print(error.description)
                    throw ExitCode(1)
                } catch {
                    print("\(rules): \(error)")
                    throw ExitCode(1)
                }
            }
            let (passed, failed) = try runCases(ruleSet)
            print("\(passed) passed, \(failed) failed")
            var belowMinimum = false
            if let ruleSet, let counts = ruleSet.coverage {
                let report = CoverageReport(counts)
                let percent = (report.percent * 10).rounded() / 10
                print("rules coverage: \(report.evaluatedCount) of \(report.entries.count) expressions evaluated (\(percent) %)")
                if let coverage { try write(report, to: coverage) }
                if let minCoverage, report.percent < minCoverage {
                    print("rules coverage \(percent) % is below --min-coverage \(minCoverage.formatted())")
                    belowMinimum = true
                }
            }
            if failed > 0 || belowMinimum { throw ExitCode(1) }
        }

        private func write(_ report: CoverageReport, to path: String) throws {
            let bytes: [UInt8]
            if path.hasSuffix(".json") {
                bytes = JSONWriter.write(report.json, style: .pretty)
            } else {
                bytes = Array(CoveragePage.html(report, title: "Rules coverage — " + (rules ?? ""), styles: .inline).utf8)
            }
            do {
                try Data(bytes).write(to: URL(fileURLWithPath: path))
            } catch {
                print("cannot write \(path): \(error.localizedDescription)")
                throw ExitCode(1)
            }
            print("coverage report written to \(path)")
        }

        private func runCases(_ ruleSet: RuleSet?) throws -> (passed: Int, failed: Int) {
            var passed = 0
            var failed = 0
            for file in files {
                let text: String
                do {
                    text = try RulesLoader.readText(file)
                } catch {
                    print(error.description)
                    throw ExitCode(1)
                }
                let report = runConformance(casesJSON: Array(text.utf8), explain: explain, ruleSet: ruleSet)
                for result in report.results where explain || !result.passed {
                    print("\(result.passed ? "ok" : "FAIL") \(result.id): \(result.detail)")
                    if explain, let decision = result.decision {
                        for line in decision.explanation { print("    \(line)") }
                    }
                }
                passed += report.passedCount
                failed += report.failedCount
            }
            return (passed, failed)
        }
    }
}
