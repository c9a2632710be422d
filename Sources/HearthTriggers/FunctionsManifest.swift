import HearthJSON

/// The triggers file made from the manifest `firebase-functions` produces for deploy (what
/// its admin server serves at `/__/functions.yaml`): each Realtime Database function
/// becomes a database trigger (its event type, `ref`, `instance`, `retry`,
/// `timeoutSeconds`), each scheduled function a schedule trigger (`schedule`, `timeZone`,
/// `retry`), each with the URL the function listens on; any other kind is skipped with
/// the reason.
public enum FunctionsManifest {
    /// A function Hearth does not serve, and why.
    public struct Skipped: Sendable, Equatable {
        public var name: String
        public var reason: String
    }

    /// What an import produced: the triggers (each its members in file order) and the skipped.
    public struct Imported: Sendable {
        public var triggers: [[(String, JSONValue)]]
        public var skipped: [Skipped]

        /// The triggers file: one trigger a line, members in a fixed order.
        public var fileText: String {
            let lines = triggers.map { members in
                "  {" + members.map { JSONWriter.string(.string($0.0)) + ": " + JSONWriter.string($0.1) }.joined(separator: ", ") + "}"
            }
            return "{\"triggers\": [\n" + lines.joined(separator: ",\n") + "\n]}\n"
        }
    }

    /// Why nothing was produced (the reason names the function or `--url` concerned).
    public struct ImportError: Error, Sendable, Equatable, CustomStringConvertible {
        public var reason: String
        public var description: String { reason }
    }

    /// `NAME=URL` arguments as a map; a malformed or repeated name is an error.
    public static func urls(_ arguments: [String]) throws(ImportError) -> [String: String] {
        var urls: [String: String] = [:]
        for argument in arguments {
            guard let equals = argument.firstIndex(of: "="), equals != argument.startIndex else {
                throw ImportError(reason: "--url \(argument): expected NAME=URL")
            }
            let name = String(argument[..<equals])
            guard urls[name] == nil else { throw ImportError(reason: "--url \(name) is given twice") }
            urls[name] = String(argument[argument.index(after: equals)...])
        }
        return urls
    }

    public static func importTriggers(manifest: JSONValue, urls: [String: String]) throws(ImportError) -> Imported {
        guard case .object(let root) = manifest else { throw ImportError(reason: "the manifest must be a mapping with \"endpoints\"") }
        guard case .object(let endpoints)? = root["endpoints"] else {
            throw ImportError(reason: "the manifest has no \"endpoints\" mapping (is it the functions.yaml of firebase-functions?)")
        }
        let names = endpoints.keys.map(\.string).sorted()
        var imported = Imported(triggers: [], skipped: [])
        var served = Set<String>()
        for name in names {
            guard case .object(let endpoint)? = endpoints[JSONKey(name)] else {
                throw ImportError(reason: "function \"\(name)\": its endpoint must be a mapping")
            }
            switch try trigger(name: name, endpoint: endpoint, urls: urls) {
            case .trigger(let members):
                served.insert(name)
                imported.triggers.append(members)
            case .unserved(let reason):
                imported.skipped.append(Skipped(name: name, reason: reason))
            }
        }
        if let extra = urls.keys.sorted().first(where: { !served.contains($0) }) {
            if let skipped = imported.skipped.first(where: { $0.name == extra }) {
                throw ImportError(reason: "--url \(extra): that function is not imported (\(skipped.reason))")
            }
            throw ImportError(reason: "--url \(extra): the manifest has no function of that name (its functions: \(names.joined(separator: ", ")))")
        }
        guard !imported.triggers.isEmpty else {
            throw ImportError(reason: "no database or scheduled function in the manifest: nothing to import")
        }
        guard imported.triggers.count <= TriggerLimits.maxTriggers else {
            throw ImportError(reason: "\(imported.triggers.count) triggers; a triggers file holds at most \(TriggerLimits.maxTriggers)")
        }
        return imported
    }

    /// One function read: its trigger's members, or why Hearth does not serve its kind.
    enum Conversion {
        case trigger([(String, JSONValue)])
        case unserved(String)
    }

    /// One function's trigger; throws for a servable function that is wrong (no URL, a bad value).
    static func trigger(name: String, endpoint: [JSONKey: JSONValue], urls: [String: String]) throws(ImportError) -> Conversion {
        func fail(_ reason: String) -> ImportError { ImportError(reason: "function \"\(name)\": \(reason)") }
        func url() throws(ImportError) -> String {
            guard let url = urls[name] else { throw fail("no URL: give --url \(name)=http://host:port/ (where that function listens)") }
            return url
        }
        if case .object(let schedule)? = endpoint["scheduleTrigger"] {
            guard case .string(let text)? = schedule["schedule"] else { throw fail("its scheduleTrigger has no schedule") }
            var members: [(String, JSONValue)] = [("name", .string(name)), ("schedule", .string(text))]
            switch schedule["timeZone"] {
            case nil, .null?: break
            case .string(let zone)?: members.append(("timeZone", .string(zone)))
            default: throw fail("timeZone must be a literal string")
            }
            let address = try url()
            // The name and URL follow a database trigger's rules.
            try check(name: name, [("name", .string(name)), ("event", .string("written")), ("ref", .string("/")), ("url", .string(address))])
            members.append(("url", .string(address)))
            // Cloud Scheduler retries only when retryCount is above 0 (its default is 0).
            var retry = false
            if case .object(let config)? = schedule["retryConfig"] {
                switch config["retryCount"] {
                case nil, .null?: break
                case .int(let count)?: retry = count > 0
                default: throw fail("retryConfig.retryCount must be a literal integer (parameters are not resolved)")
                }
            }
            members.append(("retry", .bool(retry)))
            return .trigger(members)
        }
        guard case .object(let event)? = endpoint["eventTrigger"] else {
            return .unserved(unservedKind(endpoint))
        }
        guard case .string(let eventType)? = event["eventType"] else { throw fail("its eventTrigger has no eventType") }
        guard eventType.hasPrefix(TriggerEventKind.typePrefix) else { return .unserved(unservedEvent(eventType)) }
        guard let kind = TriggerEventKind(configName: eventType) else {
            return .unserved("\(eventType) is not a Realtime Database event type Hearth delivers")
        }
        let patterns = event["eventFilterPathPatterns"]?.objectValue ?? [:]
        let filters = event["eventFilters"]?.objectValue ?? [:]
        func filter(_ key: String) throws(ImportError) -> String? {
            switch patterns[JSONKey(key)] ?? filters[JSONKey(key)] {
            case nil, .null?: return nil
            case .string(let text)?: return text
            default: throw fail("\(key) must be a literal string")
            }
        }
        guard let ref = try filter("ref") else { throw fail("its eventTrigger has no ref") }
        var members: [(String, JSONValue)] = [("name", .string(name)), ("event", .string(kind.rawValue)),
                                              ("ref", .string(ref.hasPrefix("/") ? ref : "/" + ref))]
        // The SDK's default instance is `*`, every database: Hearth's default without the member.
        if let instance = try filter("instance"), instance != "*" { members.append(("instance", .string(instance))) }
        members.append(("url", .string(try url())))
        switch event["retry"] {
        case nil, .null?: members.append(("retry", .bool(false)))
        case .bool(let flag)?: members.append(("retry", .bool(flag)))
        default: throw fail("retry must be a literal true or false (parameters are not resolved)")
        }
        switch endpoint["timeoutSeconds"] {
        case nil, .null?: break
        case .int(let seconds)?: members.append(("timeoutSeconds", .int(seconds)))
        default: throw fail("timeoutSeconds must be a literal integer (parameters are not resolved)")
        }
        try check(name: name, members)
        return .trigger(members)
    }

    /// The members read as a triggers file's database trigger would be: the same errors.
    static func check(name: String, _ members: [(String, JSONValue)]) throws(ImportError) {
        do {
            _ = try TriggerConfig.definition(.object(Dictionary(uniqueKeysWithValues: members.map { (JSONKey($0.0), $0.1) })))
        } catch {
            throw ImportError(reason: "function \"\(name)\": \(error.reason)")
        }
    }

    static func unservedKind(_ endpoint: [JSONKey: JSONValue]) -> String {
        if endpoint["httpsTrigger"] != nil { return "an HTTPS function: clients call it directly, no trigger needed" }
        if endpoint["callableTrigger"] != nil { return "a callable function: clients call it directly, no trigger needed" }
        if case .object(let blocking)? = endpoint["blockingTrigger"] {
            return "a blocking auth function (\(blocking["eventType"]?.stringValue ?? "?")): Hearth's accounts do not call blocking functions"
        }
        if endpoint["taskQueueTrigger"] != nil { return "a task queue function: Hearth has no Cloud Tasks queue" }
        return "no trigger Hearth knows (neither eventTrigger nor scheduleTrigger)"
    }

    static func unservedEvent(_ eventType: String) -> String {
        let kinds: [(String, String)] = [
            ("google.cloud.firestore.", "a Firestore trigger"), ("google.cloud.storage.", "a Cloud Storage trigger"),
            ("google.cloud.pubsub.", "a Pub/Sub trigger"), ("google.firebase.firebasealerts.", "a Firebase alerts trigger"),
            ("google.firebase.remoteconfig.", "a Remote Config trigger"), ("google.firebase.testlab.", "a Test Lab trigger"),
            ("google.cloud.eventarc.", "an Eventarc custom event trigger"), ("google.firebase.auth.", "an Auth event trigger"),
        ]
        let kind = kinds.first(where: { eventType.hasPrefix($0.0) })?.1 ?? "an event trigger"
        return "\(kind) (\(eventType)): Hearth delivers Realtime Database events only"
    }
}
