import Foundation
import HearthJSON

/// A `/.profile` report (docs/profiling.md) as the tables `hearth profile` prints: speed
/// by path and operation, bandwidth, unindexed queries, denials, the most expensive rules
/// and the slowest operations.
enum ProfileTables {
    static func render(_ report: JSONValue) -> String {
        let top = report.objectValue ?? [:]
        let rows = { (key: String) -> [[JSONKey: JSONValue]] in
            guard case .array(let items)? = top[key] else { return [] }
            return items.map { $0.objectValue ?? [:] }
        }
        let node = top["node"]?.objectValue ?? [:]
        var out = "Profile of namespace \(text(top["namespace"])) on \(text(node["hostname"])) (\(text(node["address"])))"
        if let id = node["id"]?.stringValue { out += ", node \(id)" }
        let seconds = Double(int(top["endedAt"]) - int(top["startedAt"])) / 1000
        out += ": \(String(format: "%.1f", seconds)) s of \(int(top["requestedSeconds"])) s requested\n"
        if node["sharedEngine"] == .bool(true) { out += "Only this node's operations: every node of a shared engine profiles itself.\n" }
        let operations = rows("operations")
        out += table("Speed (by operation and path)", ["Operation", "Path", "Count", "Mean ms", "p50 ms", "p99 ms"],
                     operations.sorted { int($0["count"]) > int($1["count"]) }.map {
                         [text($0["kind"]), text($0["path"]), text($0["count"]), text($0["meanMs"]), text($0["p50Ms"]), text($0["p99Ms"])]
                     })
        out += table("Bandwidth (by operation and path)", ["Operation", "Path", "Bytes in", "Bytes out"],
                     operations.sorted { int($0["bytesIn"]) + int($0["bytesOut"]) > int($1["bytesIn"]) + int($1["bytesOut"]) }.map {
                         [text($0["kind"]), text($0["path"]), text($0["bytesIn"]), text($0["bytesOut"])]
                     })
        out += table("Unindexed queries", ["Path", "Add .indexOn", "Count"],
                     rows("unindexedQueries").map { [text($0["path"]), text($0["indexOn"]), text($0["count"])] })
        out += table("Permission denials", ["Operation", "Path", "Rule", "Count"],
                     rows("denials").map { [text($0["operation"]), text($0["path"]), text($0["rule"]), text($0["count"])] })
        out += table("Most expensive rules", ["Rule", "Evaluations", "Total ms", "Mean ms"],
                     rows("rules").map { [text($0["rule"]), text($0["count"]), text($0["totalMs"]), text($0["meanMs"])] })
        out += table("Slowest operations", ["Operation", "Path", "ms"],
                     rows("slowest").map { [text($0["kind"]), text($0["path"]), text($0["ms"])] })
        return out
    }

    /// `rows` under `title` with aligned columns; "(none)" when empty.
    static func table(_ title: String, _ header: [String], _ rows: [[String]]) -> String {
        var out = "\n\(title)\n"
        guard !rows.isEmpty else { return out + "  (none)\n" }
        let widths = header.indices.map { column in ([header] + rows).map { $0[column].count }.max() ?? 0 }
        for row in [header] + rows {
            out += "  " + row.enumerated().map { $0.element.padding(toLength: widths[$0.offset], withPad: " ", startingAt: 0) }
                .joined(separator: "  ").trimmingTrailingSpaces() + "\n"
        }
        return out
    }

    static func text(_ value: JSONValue?) -> String {
        switch value {
        case .string(let text)?: return text
        case .int(let number)?: return String(number)
        case .double(let number)?: return String(format: "%.3f", number)
        case .bool(let flag)?: return String(flag)
        default: return "-"
        }
    }

    static func int(_ value: JSONValue?) -> Int64 {
        if case .int(let number)? = value { return number }
        return 0
    }
}

extension String {
    fileprivate func trimmingTrailingSpaces() -> String {
        var text = self
        while text.hasSuffix(" ") { text.removeLast() }
        return text
    }
}
