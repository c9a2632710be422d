@testable import HearthHTTP

/// An `HTTPRequestParser.Event` reduced to comparable values.
enum Parsed: Equatable, CustomStringConvertible {
    case request(method: String, target: String, path: String, query: String?, minor: Int,
                 headers: [String], body: String, keepAlive: Bool)
    case continueExpected
    case error(HTTPParseError)

    init(_ event: HTTPRequestParser.Event) {
        switch event {
        case .request(let r, let keepAlive):
            self = .request(method: r.method, target: r.target, path: r.path, query: r.query, minor: r.minorVersion,
                            headers: r.headers.fields.map { "\($0.name): \($0.value)" },
                            body: String(decoding: r.body, as: UTF8.self), keepAlive: keepAlive)
        case .continueExpected:
            self = .continueExpected
        case .error(let error):
            self = .error(error)
        }
    }

    var description: String {
        switch self {
        case .request(let m, let t, _, _, let v, let h, let b, let k): return "\(m) \(t) 1.\(v) \(h) body=\(b) ka=\(k)"
        case .continueExpected: return "100-continue"
        case .error(let e): return "error(\(e))"
        }
    }

    var error: HTTPParseError? {
        if case .error(let e) = self { return e }
        return nil
    }

    var body: String? {
        if case .request(_, _, _, _, _, _, let body, _) = self { return body }
        return nil
    }

    var keepAlive: Bool? {
        if case .request(_, _, _, _, _, _, _, let keepAlive) = self { return keepAlive }
        return nil
    }
}

/// Feeds `chunks` in order, draining events after each.
func parse(_ chunks: [[UInt8]], limits: HTTPLimits = HTTPLimits()) -> [Parsed] {
    var parser = HTTPRequestParser(limits: limits)
    var events: [Parsed] = []
    for chunk in chunks {
        parser.feed(chunk)
        while let event = parser.next() { events.append(Parsed(event)) }
    }
    return events
}

func parse(_ text: String, limits: HTTPLimits = HTTPLimits()) -> [Parsed] {
    parse([Array(text.utf8)], limits: limits)
}

/// The first error the parser reports for `text`, if any.
func parseError(_ text: String, limits: HTTPLimits = HTTPLimits()) -> HTTPParseError? {
    parse(text, limits: limits).compactMap(\.error).first
}

/// Events other than `continueExpected` (which depends on how bytes were split).
func withoutContinue(_ events: [Parsed]) -> [Parsed] {
    events.filter { $0 != .continueExpected }
}
