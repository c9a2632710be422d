import Foundation
import HearthHTTPClient
import HearthJSON

/// One declared trigger (docs/triggers.md): where its events go and on what.
public struct TriggerDefinition: Sendable, Hashable {
    public var name: String
    public var kind: TriggerEventKind
    public var ref: RefPattern
    public var url: HTTPURL
    /// Retries with backoff until `TriggerLimits.maxEventAgeSeconds` (else one attempt).
    public var retry: Bool
    /// The database instance pattern (`firebase-functions`' `instance` option); nil: any.
    public var instance: RefPattern?
    public var timeoutSeconds: Int
    /// Sent with every delivery (e.g. a shared secret header). Never logged.
    public var headers: [String: String]
    /// When set, every delivery carries `X-Hearth-Signature: sha256=<hex HMAC-SHA256 of the body>`.
    public var hmacSecret: String?
    /// The loop guard's sustained rate for this trigger (`maxEventsPerSecond`); nil: the
    /// server's default, `TriggerLimits.defaultEventsPerSecond`.
    var maxEventsPerSecond: Int?
    /// This trigger's byte budget (`maxStoredBytes`: payload bytes of its pending events and
    /// dead letters together); nil: the server's default, `TriggerLimits.defaultMaxStoredBytes`.
    public var maxStoredBytes: Int64?
    /// How many locations (`ce-subject`) are delivered at once (`maxConcurrency`): events of
    /// one location go in commit order, one at a time; 1 delivers the whole trigger in
    /// commit order, one event at a time. Within `TriggerLimits.maxConcurrencyRange`.
    public var maxConcurrency = TriggerLimits.defaultMaxConcurrency
    /// Set for a schedule (`{"name", "schedule", "timeZone", "url", ...}`): the trigger is
    /// invoked at the schedule's due times and matches no write (`kind` and `ref` unused).
    public var schedule: TriggerSchedule?

    public init(name: String, kind: TriggerEventKind, ref: RefPattern, url: HTTPURL, retry: Bool = false,
                instance: RefPattern? = nil, timeoutSeconds: Int = TriggerLimits.defaultTimeoutSeconds,
                headers: [String: String] = [:], hmacSecret: String? = nil) {
        (self.name, self.kind, self.ref, self.url, self.retry) = (name, kind, ref, url, retry)
        (self.instance, self.timeoutSeconds, self.headers, self.hmacSecret) = (instance, timeoutSeconds, headers, hmacSecret)
    }
}

/// Every bound of the triggers module, named (each crossed by a test).
public enum TriggerLimits {
    /// Triggers one file may declare.
    static let maxTriggers = 64
    /// Headers one trigger may add.
    static let maxHeaders = 16
    /// The triggers file's size.
    public static let maxFileBytes = 1 << 20
    /// A trigger's name: letters, digits, `_` and `-`, at most this long.
    static let maxNameLength = 64
    /// `timeoutSeconds` bounds and default (Cloud Functions' event functions: 60 s default, 540 s max).
    static let timeoutSecondsRange = 1...540
    public static let defaultTimeoutSeconds = 60
    /// Events one write may cause (all triggers together); past it the write is refused
    /// (`DatabaseError.tooManyTriggerEvents`) and nothing of it is written.
    public static let maxEventsPerWrite = 1000
    /// Events of one trigger waiting for delivery; past it the newest go to the dead
    /// letters (reason `backlog`), counted and logged. Writes are never slowed or refused.
    public static let maxPendingPerTrigger = 100_000
    /// A `retry: true` event is retried until it is this old (from its commit), then dead.
    static let maxEventAgeSeconds: Int64 = 24 * 3600
    /// Backoff between attempts: base doubling per attempt up to the cap, with full jitter.
    public static let backoffBaseMilliseconds: Int64 = 1000
    public static let backoffCapMilliseconds: Int64 = 10 * 60 * 1000
    /// Response bytes read from a receiver (the body is ignored).
    public static let maxResponseBytes = 64 * 1024
    /// Events read from the outbox per round of one deliverer.
    public static let batchSize = 64
    /// A deliverer's lease on its trigger (shared engines), renewed while it delivers.
    static let leaseSeconds = 30
    /// The loop guard (`TriggerRateGuard`): events one trigger records per second,
    /// sustained, unless its `maxEventsPerSecond` says otherwise, within `eventsPerSecondRange`;
    /// bursts of `rateBurstSeconds` seconds' worth above it.
    public static let defaultEventsPerSecond = 1000
    static let eventsPerSecondRange = 1...100_000
    static let rateBurstSeconds = 10
    /// The byte budget of one trigger: the payload bytes of its pending events and dead
    /// letters together (each event carries the matched location's value before and after,
    /// so a small write under a large node stores two copies of the node). Past it the
    /// oldest dead letters are deleted, then the newest pending events past it are dropped
    /// undelivered (counted, logged); writes are never slowed or refused for it. A
    /// trigger's `maxStoredBytes` overrides it, within `storedBytesRange`.
    public static let defaultMaxStoredBytes: Int64 = 64 << 20
    static let storedBytesRange: ClosedRange<Int64> = (1 << 20)...(1 << 40)
    /// How often, at most, a trigger's deliverer checks its outbox against the byte budget
    /// and the pending-count bound (woken by commits; also on its idle poll). What commits
    /// between two checks is over the budget until the next one.
    static let budgetCheckMilliseconds: Int64 = 100
    /// Dead letters are kept this long (from when they were given up), then deleted.
    public static let deadLetterRetentionSeconds: Int64 = 7 * 24 * 3600
    /// A trigger's `maxConcurrency` unless it says otherwise: locations delivered at once.
    public static let defaultMaxConcurrency = 16
    /// `maxConcurrency` bounds: each attempt under way holds a thread and a connection.
    static let maxConcurrencyRange = 1...64
    /// Events a deliverer holds in memory ahead of delivery (its window over the backlog,
    /// read in id order); with `maxBufferedBytes` the memory one trigger's backlog can take.
    static let maxBufferedEvents = 1024
    /// Payload bytes a deliverer holds in memory ahead of delivery (at least one event).
    static let maxBufferedBytes = 8 << 20
    /// The shortest time between two passes over a trigger's backlog from its oldest event
    /// (each pass reads the events of held-back locations once more): retries due sooner
    /// wait for it.
    static let minPassMilliseconds: Int64 = 1000
    /// How often, at most, dead letters past `deadLetterRetentionSeconds` are deleted.
    static let deadLetterPruneMilliseconds: Int64 = 60_000
}

/// Why a triggers file was refused: the file, the line and the reason.
public struct TriggerConfigError: Error, Sendable, Equatable, CustomStringConvertible {
    public var path: String
    /// 1-based; nil when the file could not be read at all.
    public var line: Int?
    public var reason: String

    public var description: String {
        "triggers file \(path)" + (line.map { ":\($0)" } ?? "") + ": \(reason)"
    }
}

/// The triggers file: `{"triggers": [{"name", "event", "ref", "url", "retry", "instance",
/// "timeoutSeconds", "headers", "hmacSecret", "maxEventsPerSecond", "maxStoredBytes",
/// "maxConcurrency"}]}`.
public enum TriggerConfig {
    static let triggerKeys: Set<String> = ["name", "event", "ref", "url", "retry", "instance", "timeoutSeconds", "headers", "hmacSecret", "maxEventsPerSecond", "maxStoredBytes", "maxConcurrency"]

    public static func load(path: String) throws(TriggerConfigError) -> [TriggerDefinition] {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw TriggerConfigError(path: path, line: nil, reason: "cannot be read")
        }
        guard data.count <= TriggerLimits.maxFileBytes else {
            throw TriggerConfigError(path: path, line: nil, reason: "larger than \(TriggerLimits.maxFileBytes) bytes")
        }
        return try parse(Array(data), path: path)
    }

    public static func parse(_ bytes: [UInt8], path: String) throws(TriggerConfigError) -> [TriggerDefinition] {
        func fail(_ offset: Int?, _ reason: String) -> TriggerConfigError {
            TriggerConfigError(path: path, line: offset.map { JSONPositions.line(of: $0, in: bytes) } ?? 1, reason: reason)
        }
        let root: JSONValue
        do {
            root = try JSONParser.parse(bytes)
        } catch {
            throw fail(error.offset, "not valid JSON: \(error.debugDescription)")
        }
        guard case .object(let members) = root else { throw fail(0, "the file must hold an object {\"triggers\": [...]}") }
        if let unknown = members.keys.map(\.string).sorted().first(where: { $0 != "triggers" }) {
            throw fail(0, "unknown member \"\(unknown)\" (only \"triggers\")")
        }
        guard case .array(let items)? = members["triggers"] else { throw fail(0, "\"triggers\" must be an array") }
        guard items.count <= TriggerLimits.maxTriggers else {
            throw fail(0, "\(items.count) triggers; at most \(TriggerLimits.maxTriggers)")
        }
        let offsets = JSONPositions.elementOffsets(ofArrayMember: "triggers", in: bytes)
        var names = Set<String>()
        var definitions: [TriggerDefinition] = []
        for (index, item) in items.enumerated() {
            let offset = index < offsets.count ? offsets[index] : 0
            do throws(Invalid) {
                let definition = try definition(item)
                guard names.insert(definition.name).inserted else { throw Invalid("the name \"\(definition.name)\" is used twice") }
                definitions.append(definition)
            } catch {
                let label = item.objectValue?["name"]?.stringValue.map { "trigger \"\($0)\"" } ?? "trigger #\(index + 1)"
                throw fail(offset, "\(label): \(error.reason)")
            }
        }
        return definitions
    }

    struct Invalid: Error {
        let reason: String
        init(_ reason: String) { self.reason = reason }
    }

    static func definition(_ item: JSONValue) throws(Invalid) -> TriggerDefinition {
        guard case .object(let fields) = item else { throw Invalid("must be an object") }
        if fields["schedule"] != nil { return try scheduleDefinition(fields) }
        if let unknown = fields.keys.map(\.string).sorted().first(where: { !triggerKeys.contains($0) }) {
            throw Invalid("unknown field \"\(unknown)\"; known: " + triggerKeys.sorted().joined(separator: ", "))
        }
        func string(_ key: String) throws(Invalid) -> String? {
            guard let value = fields[JSONKey(key)] else { return nil }
            guard case .string(let text) = value else { throw Invalid("\"\(key)\" must be a string") }
            return text
        }
        guard let name = try string("name") else { throw Invalid("\"name\" is missing") }
        guard !name.isEmpty, name.utf8.count <= TriggerLimits.maxNameLength,
              name.utf8.allSatisfy({ $0 == 0x2D || $0 == 0x5F || ($0 >= 0x30 && $0 <= 0x39) || ($0 | 0x20 >= 0x61 && $0 | 0x20 <= 0x7A) }) else {
            throw Invalid("\"name\" must be 1 to \(TriggerLimits.maxNameLength) letters, digits, _ or -")
        }
        guard let eventText = try string("event") else { throw Invalid("\"event\" is missing") }
        guard let kind = TriggerEventKind(configName: eventText) else {
            throw Invalid("\"event\" must be written, created, updated, deleted or \(TriggerEventKind.typePrefix)<one of them>")
        }
        guard let refText = try string("ref") else { throw Invalid("\"ref\" is missing") }
        let ref: RefPattern
        do { ref = try RefPattern(refText) } catch { throw Invalid("\"ref\": \(error.description)") }
        guard let urlText = try string("url") else { throw Invalid("\"url\" is missing") }
        let url: HTTPURL
        do { url = try HTTPURL(urlText) } catch { throw Invalid("\"url\": \(error.description)") }
        var definition = TriggerDefinition(name: name, kind: kind, ref: ref, url: url)
        if let retry = fields["retry"] {
            guard case .bool(let flag) = retry else { throw Invalid("\"retry\" must be true or false") }
            definition.retry = flag
        }
        if let instance = try string("instance") {
            do {
                let pattern = try RefPattern(instance)
                guard pattern.segments.count == 1 else { throw Invalid("\"instance\" is one segment: a name, * or {param}") }
                definition.instance = pattern
            } catch let error as RefPattern.ParseError {
                throw Invalid("\"instance\": \(error.description)")
            } catch let error as Invalid {
                throw error
            } catch {
                throw Invalid("\"instance\": \(error)")
            }
        }
        if let timeout = fields["timeoutSeconds"] {
            guard case .int(let seconds) = timeout, TriggerLimits.timeoutSecondsRange.contains(Int(seconds)) else {
                throw Invalid("\"timeoutSeconds\" must be an integer in \(TriggerLimits.timeoutSecondsRange.lowerBound)...\(TriggerLimits.timeoutSecondsRange.upperBound)")
            }
            definition.timeoutSeconds = Int(seconds)
        }
        if let rate = fields["maxEventsPerSecond"] {
            guard case .int(let perSecond) = rate, TriggerLimits.eventsPerSecondRange.contains(Int(perSecond)) else {
                throw Invalid("\"maxEventsPerSecond\" must be an integer in \(TriggerLimits.eventsPerSecondRange.lowerBound)...\(TriggerLimits.eventsPerSecondRange.upperBound)")
            }
            definition.maxEventsPerSecond = Int(perSecond)
        }
        if let budget = fields["maxStoredBytes"] {
            guard case .int(let bytes) = budget, TriggerLimits.storedBytesRange.contains(bytes) else {
                throw Invalid("\"maxStoredBytes\" must be an integer in \(TriggerLimits.storedBytesRange.lowerBound)...\(TriggerLimits.storedBytesRange.upperBound)")
            }
            definition.maxStoredBytes = bytes
        }
        if let concurrency = fields["maxConcurrency"] {
            guard case .int(let count) = concurrency, TriggerLimits.maxConcurrencyRange.contains(Int(count)) else {
                throw Invalid("\"maxConcurrency\" must be an integer in \(TriggerLimits.maxConcurrencyRange.lowerBound)...\(TriggerLimits.maxConcurrencyRange.upperBound)")
            }
            definition.maxConcurrency = Int(count)
        }
        if let headers = fields["headers"] {
            definition.headers = try Self.headers(headers, url: url, reserved: [])
        }
        if let secret = try string("hmacSecret") {
            guard secret.utf8.count >= 16 else { throw Invalid("\"hmacSecret\" must be at least 16 bytes") }
            definition.hmacSecret = secret
        }
        return definition
    }
    /// A trigger's `headers`: at most `TriggerLimits.maxHeaders` strings, none Hearth sets
    /// itself (`ce-*`, `Content-Type`, `X-Hearth-Signature`, and `reserved`, lowercased),
    /// each a valid header line.
    static func headers(_ value: JSONValue, url: HTTPURL, reserved: Set<String>) throws(Invalid) -> [String: String] {
        guard case .object(let pairs) = value else { throw Invalid("\"headers\" must be an object of strings") }
        guard pairs.count <= TriggerLimits.maxHeaders else { throw Invalid("\"headers\": at most \(TriggerLimits.maxHeaders)") }
        var headers: [String: String] = [:]
        for (key, value) in pairs {
            guard case .string(let text) = value else { throw Invalid("\"headers\": the value of \(key.string) must be a string") }
            let lower = key.string.lowercased()
            guard !lower.hasPrefix("ce-"), lower != "content-type", lower != "x-hearth-signature", !reserved.contains(lower) else {
                throw Invalid("\"headers\": \(key.string) is set by Hearth itself")
            }
            headers[key.string] = text
        }
        do {
            _ = try HTTPClient.head(of: HTTPClientRequest(method: "POST", url: url, headers: headers.map { ($0.key, $0.value) }))
        } catch {
            throw Invalid("\"headers\": \(error.description)")
        }
        return headers
    }
}
