import Foundation
import HearthJSON
@testable import HearthRules

/// Test fixtures bundled with `.copy("Fixtures")`.
enum Fixtures {
    static func bytes(_ name: String) -> [UInt8] {
        guard let url = Bundle.module.url(forResource: name, withExtension: "json", subdirectory: "Fixtures"),
              let data = try? Data(contentsOf: url)
        else {
            fatalError("missing fixture Fixtures/\(name).json")
        }
        return [UInt8](data)
    }

    static func entries(_ name: String) -> [JSONValue] {
        guard case .array(let entries)? = try? JSONParser.parse(bytes(name)) else {
            fatalError("fixture \(name).json is not a JSON array")
        }
        return entries
    }

    static let cases: [ConformanceCase] = entries("cases").map { entry in
        do {
            return try ConformanceCase(json: entry)
        } catch {
            fatalError("malformed case: \(error)")
        }
    }

    /// An entry of `invalid-rules.json` / `valid-rules.json`.
    struct RulesFile: Sendable, CustomStringConvertible {
        let id: String
        let rules: JSONValue
        var description: String { id }
    }

    static func rulesFiles(_ name: String) -> [RulesFile] {
        entries(name).map { entry in
            RulesFile(id: entry.objectValue?["id"]?.stringValue ?? "?", rules: entry.objectValue?["rules"] ?? .null)
        }
    }
}

extension JSONValue {
    /// Parses test JSON text.
    static func parse(_ text: String) -> JSONValue {
        do {
            return try JSONParser.parse(text)
        } catch {
            fatalError("bad test JSON \(text): \(error)")
        }
    }
}

func path(_ text: String) -> DataPath {
    do {
        return try DataPath(string: text)
    } catch {
        fatalError("bad test path \(text)")
    }
}

/// `{"uid": uid, "provider": "password", "token": {...}}`, or null.
func auth(_ uid: String?, token: [String: JSONValue] = [:]) -> JSONValue {
    guard let uid else { return .null }
    return .object(["uid": .string(uid), "provider": .string("password"), "token": .object(token)])
}

func compile(_ text: String, limits: RuleLimits = RuleLimits()) -> RuleSet {
    do {
        return try RuleSet.compile(text, limits: limits)
    } catch {
        fatalError("rules did not compile: \(error)")
    }
}

/// The diagnostics of rules that must not compile (empty if they do compile).
func diagnostics(_ text: String) -> [RuleDiagnostic] {
    do {
        _ = try RuleSet.compile(text)
        return []
    } catch {
        return error.diagnostics
    }
}

let testNow: Int64 = 1_700_000_000_000
