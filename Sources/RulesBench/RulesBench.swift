// Hand-run timing of rule checks (release build); not a test: numbers depend on the machine.
// Conformance cases run through `hearth rules test`, not here.
//
//   swift run -c release RulesBench [--rules rules.json] [--iterations 200000] [--only NAME] [--coverage]
//
// --coverage: each check also with the rules compiled for coverage (probes on), the two
// alternating, and the overhead of the probes.
import HearthJSON
import HearthRules

@main
struct RulesBench {
    static func main() throws {
        let arguments = Array(CommandLine.arguments.dropFirst())
        func value(_ flag: String) -> String? {
            arguments.firstIndex(of: flag).flatMap { $0 + 1 < arguments.count ? arguments[$0 + 1] : nil }
        }
        let iterations = value("--iterations").flatMap(Int.init) ?? 100_000
        let rulesPath = value("--rules") ?? "rules.json"
        try Timing.run(rulesText: try readText(rulesPath), iterations: iterations, only: value("--only"), coverage: arguments.contains("--coverage"))
    }

    static func readText(_ path: String) throws -> String {
        var text = ""
        guard let file = fopen(path, "rb") else { throw BenchError("cannot open \(path) (run from the repository root or pass --rules)") }
        defer { fclose(file) }
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = fread(&buffer, 1, buffer.count, file)
            if count <= 0 { break }
            text += String(decoding: buffer[0..<count], as: UTF8.self)
        }
        return text
    }
}

struct BenchError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

#if canImport(Glibc)
import Glibc
#endif
