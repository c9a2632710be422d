import Foundation
import HearthJSON

/// The operator's list of namespaces (`--namespaces-file`, docs/namespaces.md):
///
/// ```json
/// {"default": "my-app",
///  "namespaces": {"my-app-eu": {"rules": "rules-eu.json"}, "my-app-us": {"rules": "rules-us.json"}}}
/// ```
///
/// `default` (optional) is the name the default namespace answers to; each other namespace
/// has a rules file (a relative path is relative to this file's folder). With a list,
/// a name it does not know is unknown: 404 on REST, the protocol's shutdown on `/.ws`.
public struct NamespacesFile: Equatable, Sendable {
    public var defaultName: String?
    /// Name → rules file path.
    public var namespaces: [String: String]

    public struct Invalid: Error, CustomStringConvertible {
        public let description: String
    }

    public static func load(_ path: String) throws(Invalid) -> NamespacesFile {
        guard let data = FileManager.default.contents(atPath: path) else { throw Invalid(description: "namespaces file \(path): cannot be read") }
        let folder = (path as NSString).deletingLastPathComponent
        return try parse(Array(data), folder: folder.isEmpty ? "." : folder, source: path)
    }

    static func parse(_ bytes: [UInt8], folder: String, source: String) throws(Invalid) -> NamespacesFile {
        func invalid(_ reason: String) -> Invalid { Invalid(description: "namespaces file \(source): \(reason)") }
        guard case .object(let top)? = try? JSONParser.parse(bytes) else { throw invalid("expected a JSON object") }
        for key in top.keys where key != "default" && key != "namespaces" {
            throw invalid("unknown key \"\(key)\" (expected \"default\" and \"namespaces\")")
        }
        var file = NamespacesFile(defaultName: nil, namespaces: [:])
        if let name = top["default"] {
            guard let text = name.stringValue else { throw invalid("\"default\" must be a string") }
            if let problem = NamespaceName.problem(text) { throw invalid(problem) }
            file.defaultName = text
        }
        let listed: [JSONKey: JSONValue]
        switch top["namespaces"] {
        case nil: listed = [:]
        case .object(let members)?: listed = members
        default: throw invalid("\"namespaces\" must be an object")
        }
        if listed.isEmpty && file.defaultName == nil { throw invalid("no namespaces listed") }
        guard listed.count <= NamespaceRegistry.maxNamespaces else {
            throw invalid("\(listed.count) namespaces; at most \(NamespaceRegistry.maxNamespaces) besides the default")
        }
        for (key, entry) in listed {
            let name = key.description
            if let problem = NamespaceName.problem(name) { throw invalid(problem) }
            if name == file.defaultName { throw invalid("\"\(name)\" is the default namespace's name") }
            guard case .object(let members) = entry, let rules = members["rules"]?.stringValue, !rules.isEmpty else {
                throw invalid("namespace \"\(name)\" needs {\"rules\": \"<rules file>\"}")
            }
            file.namespaces[name] = rules.hasPrefix("/") ? rules : folder + "/" + rules
        }
        return file
    }
}
