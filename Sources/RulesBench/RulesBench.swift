// Hand-run timing of rule checks (release build), and a conformance runner for rule
// development. Not a test: numbers depend on the machine.
//
//   swift run -c release RulesBench --iterations 200000
//   swift run RulesBench conformance /path/to/cases.json [--explain]
import HearthJSON
import HearthRules

#if canImport(Glibc)
import Glibc
#endif

@main
struct RulesBench {
    static func main() throws {
        let arguments = Array(CommandLine.arguments.dropFirst())
        if arguments.first == "conformance", arguments.count >= 2 {
            try runConformanceFile(arguments[1], explain: arguments.contains("--explain"))
            return
        }
        if arguments.first == "details", arguments.count >= 3 {
            try showDetails(arguments[1], expectValid: arguments[2] == "valid")
            return
        }
        if arguments.first == "rules", arguments.count >= 3 {
            try runRulesFile(arguments[1], expectValid: arguments[2] == "valid")
            return
        }
        var iterations = 100_000
        let only = arguments.firstIndex(of: "--only").flatMap { $0 + 1 < arguments.count ? arguments[$0 + 1] : nil }
        if let index = arguments.firstIndex(of: "--iterations"), index + 1 < arguments.count, let count = Int(arguments[index + 1]) {
            iterations = count
        }
        try Timing.run(iterations: iterations, only: only)
    }

    static func readBytes(_ path: String) throws -> [UInt8] {
        guard let file = fopen(path, "rb") else { throw BenchError("cannot open \(path)") }
        defer { fclose(file) }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = fread(&buffer, 1, buffer.count, file)
            if count <= 0 { break }
            bytes.append(contentsOf: buffer[0..<count])
        }
        return bytes
    }

    static func runConformanceFile(_ path: String, explain: Bool) throws {
        let report = runConformance(casesJSON: try readBytes(path), explain: explain)
        for line in report.failureLines { print(line) }
        print(report.summary)
    }

    static func runRulesFile(_ path: String, expectValid: Bool) throws {
        let report = checkRulesCorpus(json: try readBytes(path), expectValid: expectValid)
        for line in report.failureLines { print(line) }
        print(report.summary)
    }
}

struct BenchError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

extension RulesBench {
    static func showDetails(_ path: String, expectValid: Bool) throws {
        let report = checkRulesCorpus(json: try readBytes(path), expectValid: expectValid)
        for result in report.results { print("\(result.id): \(result.detail)") }
    }
}
