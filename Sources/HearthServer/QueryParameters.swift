import HearthJSON
import HearthRules
import HearthStore

/// The query of a GET or a stream (spec §1.3), parsed from its parameters: what the store
/// runs, what the rules see as `query`, and which `.indexOn` entry it needs.
struct QueryParameters: Sendable, Equatable {
    var tree: TreeQuery
    var rules: RuleQuery
    /// The `.indexOn` entry the query needs at its path: the child path, or `.value`;
    /// nil for `$key` and `$priority`, which need none.
    var requiredIndex: String?

    /// Parameter names that make a request a query.
    static let names: Set<String> = [
        "orderBy", "startAt", "endAt", "equalTo", "limitToFirst", "limitToLast", "startAfter", "endBefore",
    ]

    /// Builds the query from raw (percent-decoded) parameter values. Values are JSON, as
    /// the SDKs send them (`orderBy="$key"`, `startAt=5`, `equalTo="Oslo"`).
    init?(_ raw: [String: String]) throws(APIError) {
        guard !raw.isEmpty else { return nil }
        guard let orderText = raw["orderBy"] else {
            throw .badRequest("orderBy must be defined when other query parameters are defined")
        }
        guard case .string(let order)? = try? JSONParser.parse(Array(orderText.utf8)) else {
            throw .badRequest("orderBy must be a valid JSON encoded path")
        }
        switch order {
        case "$key":
            tree = TreeQuery(orderBy: .key)
            rules = RuleQuery(orderBy: .key)
            requiredIndex = nil
        case "$value":
            tree = TreeQuery(orderBy: .value)
            rules = RuleQuery(orderBy: .value)
            requiredIndex = ".value"
        case "$priority":
            tree = TreeQuery(orderBy: .priority)
            rules = RuleQuery(orderBy: .priority)
            requiredIndex = nil
        default:
            let path: DataPath
            do {
                path = try DataPath(string: order)
            } catch {
                throw .badRequest("orderBy must be a valid JSON encoded path")
            }
            guard !path.isRoot else { throw .badRequest("orderBy must be a valid JSON encoded path") }
            tree = TreeQuery(orderBy: .child(path))
            rules = RuleQuery(orderBy: .child(path.storageKey))
            requiredIndex = path.storageKey
        }
        let byKey = order == "$key"
        func bound(_ name: String) throws(APIError) -> JSONValue? {
            guard let text = raw[name] else { return nil }
            guard let value = try? JSONParser.parse(Array(text.utf8)) else {
                throw .badRequest("\(name) must be a JSON value (strings in double quotes)")
            }
            switch value {
            case .object, .array: throw .badRequest("\(name) must be a string, number, boolean or null")
            case .string: return value
            default:
                if byKey { throw .badRequest("\(name) must be a string when ordering by $key") }
                return value
            }
        }
        func limit(_ name: String) throws(APIError) -> Int? {
            guard let text = raw[name] else { return nil }
            guard let n = Int(text), n > 0 else { throw .badRequest("\(name) must be a positive integer") }
            return n
        }
        let (startAt, startAfter, endAt, endBefore, equalTo) =
            (try bound("startAt"), try bound("startAfter"), try bound("endAt"), try bound("endBefore"), try bound("equalTo"))
        if startAt != nil && startAfter != nil { throw .badRequest("startAt and startAfter cannot both be used") }
        if endAt != nil && endBefore != nil { throw .badRequest("endAt and endBefore cannot both be used") }
        if let equalTo {
            guard startAt == nil, startAfter == nil, endAt == nil, endBefore == nil else {
                throw .badRequest("equalTo cannot be used with startAt, startAfter, endAt or endBefore")
            }
            tree.start = .init(equalTo, inclusive: true)
            tree.end = .init(equalTo, inclusive: true)
            rules.equalTo = equalTo
        }
        if let startAt { tree.start = .init(startAt, inclusive: true); rules.startAt = startAt }
        if let startAfter { tree.start = .init(startAfter, inclusive: false); rules.startAt = startAfter }
        if let endAt { tree.end = .init(endAt, inclusive: true); rules.endAt = endAt }
        if let endBefore { tree.end = .init(endBefore, inclusive: false); rules.endAt = endBefore }
        let (first, last) = (try limit("limitToFirst"), try limit("limitToLast"))
        if first != nil && last != nil { throw .badRequest("limitToFirst and limitToLast cannot both be used") }
        if let first { tree.limit = .first(first); rules.limitToFirst = first }
        if let last { tree.limit = .last(last); rules.limitToLast = last }
    }

    /// Firebase's advice when the rules lack the index a query needs (spec §1.3).
    func missingIndexError(at path: DataPath) -> APIError {
        .badRequest("Index not defined, add \".indexOn\": \"\(requiredIndex ?? "")\", for path \"\(path.description)\", to the rules")
    }
}
