import HearthJSON

/// The query of a GET or a stream (docs/protocol/rest.md §1.3), parsed from its parameters
/// into the core's `DatabaseQuery`.
extension DatabaseQuery {
    /// Parameter names that make a REST request a query.
    static let restNames: Set<String> = [
        "orderBy", "startAt", "endAt", "equalTo", "limitToFirst", "limitToLast", "startAfter", "endBefore",
    ]

    /// Builds the query from raw (percent-decoded) parameter values. Values are JSON, as
    /// the SDKs send them (`orderBy="$key"`, `startAt=5`, `equalTo="Oslo"`).
    init?(restParameters raw: [String: String]) throws(APIError) {
        guard !raw.isEmpty else { return nil }
        guard let orderText = raw["orderBy"] else {
            throw .badRequest("orderBy must be defined when other query parameters are defined")
        }
        guard case .string(let order)? = try? JSONParser.parse(Array(orderText.utf8)) else {
            throw .badRequest("orderBy must be a valid JSON encoded path")
        }
        switch order {
        case "$key": self.init(orderBy: .key)
        case "$value": self.init(orderBy: .value)
        case "$priority": self.init(orderBy: .priority)
        default:
            let path: DataPath
            do {
                path = try DataPath(string: order)
            } catch {
                throw .badRequest("orderBy must be a valid JSON encoded path")
            }
            guard !path.isRoot else { throw .badRequest("orderBy must be a valid JSON encoded path") }
            self.init(orderBy: .child(path))
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
        func positive(_ name: String) throws(APIError) -> Int? {
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
            equal(to: equalTo)
        }
        if let startAt { start(at: startAt, inclusive: true) }
        if let startAfter { start(at: startAfter, inclusive: false) }
        if let endAt { end(at: endAt, inclusive: true) }
        if let endBefore { end(at: endBefore, inclusive: false) }
        let (first, last) = (try positive("limitToFirst"), try positive("limitToLast"))
        if first != nil && last != nil { throw .badRequest("limitToFirst and limitToLast cannot both be used") }
        if let first { limit(toFirst: first) }
        if let last { limit(toLast: last) }
    }
}

extension APIError {
    /// Firebase's advice when the rules lack the index a query needs (docs/protocol/rest.md
    /// §1.3).
    static func missingIndex(_ index: String, at path: DataPath) -> APIError {
        .badRequest("Index not defined, add \".indexOn\": \"\(index)\", for path \"\(path.description)\", to the rules")
    }
}
