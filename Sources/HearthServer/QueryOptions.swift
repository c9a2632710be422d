import HearthJSON

/// The query parameters of an RTDB REST request (docs/protocol/rest.md §1.3) that this
/// server understands.
struct QueryOptions: Sendable, Equatable {
    enum Print: Sendable, Equatable { case normal, pretty, silent }

    var print: Print = .normal
    var shallow = false
    /// `format=export` (docs/protocol/rest.md §1.3): the stored form, with priorities.
    /// Hearth stores no priorities, so this is the value without the array rendering
    /// (integer-keyed objects stay objects), which is how an export must look to re-import
    /// exactly.
    var export = false
    /// The raw `auth`/`access_token` credential, if any.
    var credential: String?
    /// `auth_variable_override=<json>` (docs/protocol/rest.md §1.3): an admin asks to be
    /// judged by the rules as this `auth` (an object, or `null` for signed out). Nil when
    /// absent.
    var authOverride: JSONValue?
    /// `orderBy` and its filters (docs/protocol/rest.md §1.3), when the request is a query.
    var query: DatabaseQuery?

    /// Parses `query` (still percent-encoded). Unknown parameters are ignored, as Firebase
    /// does, so cache-busting parameters and newer client options do not break requests.
    init(query: String?) throws(APIError) {
        guard let query, !query.isEmpty else { return }
        var queryValues: [String: String] = [:]
        for pair in query.split(separator: "&", omittingEmptySubsequences: true) {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            guard let name = PercentEncoding.decode(parts[0].utf8, plusIsSpace: true),
                  let value = PercentEncoding.decode(parts.count > 1 ? parts[1].utf8 : Substring("").utf8, plusIsSpace: true) else {
                throw .badRequest("Invalid query string: bad percent-encoding")
            }
            switch name {
            case "print":
                switch value {
                case "pretty": print = .pretty
                case "silent": print = .silent
                default: throw .badRequest("print must be 'pretty' or 'silent'")
                }
            case "format":
                guard value == "export" else { throw .badRequest("format must be 'export'") }
                export = true
            case "shallow":
                switch value {
                case "true": shallow = true
                case "false": shallow = false
                default: throw .badRequest("shallow must be 'true' or 'false'")
                }
            case "auth", "access_token":
                credential = value
            case "timeout":
                // Hearth sets no read time limit of its own; a malformed one is still refused
                // as Firebase refuses it, not taken silently.
                guard Self.isValidTimeout(value) else {
                    throw .badRequest("timeout must be a whole number of ms, s or min (500ms, 3s, 2min), from 1ms to 15min")
                }
            case "writeSizeLimit":
                // Hearth bounds a write by its nodes (maxNodesPerWrite), not by this estimate.
                guard Self.writeSizeLimits.contains(value) else {
                    throw .badRequest("writeSizeLimit must be tiny, small, medium, large or unlimited")
                }
            case "auth_variable_override":
                guard let parsed = try? JSONParser.parse(Array(value.utf8)), parsed == .null || parsed.objectValue != nil else {
                    throw .badRequest("auth_variable_override must be a JSON object or null")
                }
                authOverride = parsed
            default:
                if DatabaseQuery.restNames.contains(name) {
                    guard queryValues[name] == nil else { throw .badRequest("\(name) is given twice") }
                    queryValues[name] = value
                }
            }
        }
        self.query = try DatabaseQuery(restParameters: queryValues)
    }

    /// Firebase's longest `timeout`: 15 minutes.
    static let maxTimeoutMilliseconds: Int64 = 15 * 60 * 1000

    /// `writeSizeLimit`'s values.
    static let writeSizeLimits: Set<String> = ["tiny", "small", "medium", "large", "unlimited"]

    /// Whether `value` is a `timeout`: digits and a unit (`ms`, `s`, `min`), from 1 ms to
    /// `maxTimeoutMilliseconds`.
    static func isValidTimeout(_ value: String) -> Bool {
        let units: [(suffix: String, milliseconds: Int64)] = [("ms", 1), ("min", 60_000), ("s", 1_000)]
        guard let unit = units.first(where: { value.hasSuffix($0.suffix) }) else { return false }
        let digits = value.dropLast(unit.suffix.count)
        guard !digits.isEmpty, digits.utf8.allSatisfy({ (0x30...0x39).contains($0) }), let number = Int64(digits) else { return false }
        let (milliseconds, overflow) = number.multipliedReportingOverflow(by: unit.milliseconds)
        return !overflow && milliseconds >= 1 && milliseconds <= maxTimeoutMilliseconds
    }
}
