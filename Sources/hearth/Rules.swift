import ArgumentParser
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
                """)

        @Argument(help: "One or more case files.")
        var files: [String]

        @Flag(help: "For every case, print which rule at which path allowed or denied.")
        var explain = false

        func run() throws {
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
                let report = runConformance(casesJSON: Array(text.utf8), explain: explain)
                for result in report.results where explain || !result.passed {
                    print("\(result.passed ? "ok" : "FAIL") \(result.id): \(result.detail)")
                    if explain, let decision = result.decision {
                        for line in decision.explanation { print("    \(line)") }
                    }
                }
                passed += report.passedCount
                failed += report.failedCount
            }
            print("\(passed) passed, \(failed) failed")
            if failed > 0 { throw ExitCode(1) }
        }
    }
}
