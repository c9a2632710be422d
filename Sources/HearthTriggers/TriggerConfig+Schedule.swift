import HearthJSON

extension TriggerConfig {
    /// The fields of a schedule (docs/triggers.md, "Schedules"): no `event`, `ref` or
    /// `instance` (it matches no write), no `hmacSecret` (its request has no body to sign:
    /// authenticate it with `headers`), no `maxEventsPerSecond` (it makes one event per due time).
    static let scheduleKeys: Set<String> = ["name", "schedule", "timeZone", "url", "retry", "timeoutSeconds", "headers", "maxStoredBytes"]

    /// A schedule's definition: the fields it shares with a database trigger are read and
    /// checked as theirs are, then `schedule` and `timeZone`.
    static func scheduleDefinition(_ fields: [JSONKey: JSONValue]) throws(Invalid) -> TriggerDefinition {
        if let unknown = fields.keys.map(\.string).sorted().first(where: { !scheduleKeys.contains($0) }) {
            throw Invalid("unknown field \"\(unknown)\" for a schedule; known: " + scheduleKeys.sorted().joined(separator: ", "))
        }
        guard case .string(let expression)? = fields["schedule"] else { throw Invalid("\"schedule\" must be a string") }
        var zone = "UTC"
        if let value = fields["timeZone"] {
            guard case .string(let name) = value else { throw Invalid("\"timeZone\" must be a string (an IANA name)") }
            zone = name
        }
        var shared = fields
        shared["schedule"] = nil
        shared["timeZone"] = nil
        shared["event"] = .string(TriggerEventKind.written.rawValue)
        shared["ref"] = .string("/")
        var definition = try definition(.object(shared))
        if let headers = fields["headers"] {
            definition.headers = try Self.headers(headers, url: definition.url, reserved: ScheduledInvocation.reservedHeaders)
        }
        do {
            definition.schedule = try TriggerSchedule(expression, timeZone: zone)
        } catch {
            throw Invalid((error.description.hasPrefix("unknown time zone") ? "\"timeZone\": " : "\"schedule\": ") + error.description)
        }
        return definition
    }
}

extension TriggerDefinition {
    /// What operators see as its event (`hearth triggers list`, the console): the event
    /// kind, or `schedule`.
    var shownEvent: String { schedule == nil ? kind.rawValue : "schedule" }
    /// What they see as its ref: the pattern, or a schedule's expression and time zone.
    var shownRef: String { schedule.map { "\($0.expression) (\($0.timeZoneName))" } ?? "/" + ref.text }
}
