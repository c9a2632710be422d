import HearthDatabase
import HearthJSON
import HearthStore

/// Who made a write, as the RTDB CloudEvents say it (`authtype`, `authid`).
struct EventAuth: Sendable, Equatable {
    var type: String
    var id: String?

    /// An admin → `admin`; a signed-in user → `app_user` with the uid; else `unauthenticated`.
    init(_ caller: Caller) {
        if caller.isAdmin {
            (type, id) = ("admin", nil)
        } else if case .string(let uid)? = caller.auth.objectValue?["uid"] {
            (type, id) = ("app_user", uid)
        } else {
            (type, id) = ("unauthenticated", nil)
        }
    }

    init(type: String, id: String?) { (self.type, self.id) = (type, id) }
}

/// One event a write causes for one trigger, before it is stored.
struct MatchedEvent: Sendable, Equatable {
    var trigger: String
    var location: DataPath
    var kind: TriggerEventKind
    var change: ValueChange
    var auth: EventAuth

    /// The payload stored in the outbox (the triggers module's own JSON; the engine keeps
    /// it opaque): `{"ref", "type", "data", "delta", "authtype", "authid"}`.
    var payload: [UInt8] {
        var members: [JSONKey: JSONValue] = [
            "ref": .string(location.storageKey), "type": .string(kind.cloudEventType),
            "data": change.before, "delta": change.delta, "authtype": .string(auth.type),
        ]
        if let id = auth.id { members["authid"] = .string(id) }
        return JSONWriter.write(.object(members))
    }
}

/// Matches a committed write against the triggers (docs/design.md §11): the locations a
/// trigger's pattern names at, above or below the write's paths whose value the write
/// changes, one event each.
public struct TriggerMatcher: Sendable {
    public let triggers: [TriggerDefinition]
    /// Each trigger's own `maxEventsPerSecond` by name (the loop guard's limits; unset: the default), derived once
    /// here rather than on every write.
    let eventsPerSecond: [String: Int]

    /// Only the triggers whose `instance` pattern accepts `instance`.
    public init(triggers: [TriggerDefinition], instance: String) {
        self.triggers = triggers.filter { trigger in
            trigger.instance.map { $0.match(DataPath(uncheckedSegments: [instance])) != nil } ?? true
        }
        eventsPerSecond = Dictionary(self.triggers.compactMap { trigger in trigger.maxEventsPerSecond.map { (trigger.name, $0) } }, uniquingKeysWith: { _, last in last })
    }

    /// True when some trigger could match a location of `operation` (the cheap exit:
    /// no read of the data when none can).
    func mayMatch(_ operation: WriteOperation) -> Bool {
        operation.entries.contains { entry in
            triggers.contains { $0.schedule == nil && Self.affects($0.ref, entry.path) }
        }
    }

    static func affects(_ pattern: RefPattern, _ path: DataPath) -> Bool {
        if pattern.mayMatchBelow(path) { return true }
        for length in 0..<path.count where pattern.match(DataPath(uncheckedSegments: Array(path.segments.prefix(length)))) != nil {
            return true
        }
        return false
    }

    /// The events `applied` causes, read on `before` (the writer's view before the write).
    /// Throws `DatabaseError.tooManyTriggerEvents` past `limit`.
    func events(before: any TreeView, applied: WriteOperation, auth: EventAuth,
                       limit: Int = TriggerLimits.maxEventsPerWrite) throws -> [MatchedEvent] {
        guard mayMatch(applied) else { return [] }
        var reader = ChangeReader(view: before, entries: Array(applied.entries))
        var events: [MatchedEvent] = []
        for trigger in triggers where trigger.schedule == nil {  // a schedule matches no write
            for location in try reader.locations(matching: trigger.ref) {
                let change = try reader.change(at: location)
                guard change.kinds.contains(trigger.kind) else { continue }
                events.append(MatchedEvent(trigger: trigger.name, location: location, kind: trigger.kind, change: change, auth: auth))
                if events.count > limit { throw DatabaseError.tooManyTriggerEvents(limit: limit) }
            }
        }
        return events
    }
}

/// A write's entries and the data before them, read lazily and once.
///
/// A multi-location update can hold many entries (a 16 MiB body, hundreds of thousands),
/// and a trigger can match a location at each of them, so `change(at:)` finds the entry
/// above a location and those at or below it through a `PathIndex`, not a pass over the
/// entries, and builds a location's value after the write in place, one change per entry,
/// not copied whole for each (`set`). This runs on the writer, before the write commits:
/// work quadratic in the entries would hold every other write of the database.
struct ChangeReader {
    let view: any TreeView
    let entries: [WriteEntry]
    private var beforeAtEntry: [DataPath: JSONValue] = [:]
    private let index: PathIndex
    /// Index probes and entries `change(at:)` has looked at: what the complexity test counts.
    private(set) var entriesVisited = 0

    init(view: any TreeView, entries: [WriteEntry]) {
        (self.view, self.entries) = (view, entries)
        index = PathIndex(entries.map(\.path))
    }

    /// The locations `pattern` matches at, above or below an entry, in path order.
    mutating func locations(matching pattern: RefPattern) throws -> [DataPath] {
        var found = Set<DataPath>()
        for entry in entries {
            for length in 0...entry.path.count {
                let prefix = DataPath(uncheckedSegments: Array(entry.path.segments.prefix(length)))
                if pattern.match(prefix) != nil { found.insert(prefix) }
            }
            guard pattern.mayMatchBelow(entry.path) else { continue }
            let before = try beforeValue(at: entry.path)
            Self.walk(before, entry.value ?? .null, at: entry.path, pattern: pattern, into: &found)
        }
        return found.sorted()
    }

    /// Every location strictly below `path` present before or after that `pattern` matches.
    private static func walk(_ before: JSONValue, _ after: JSONValue, at path: DataPath, pattern: RefPattern, into found: inout Set<DataPath>) {
        var keys = Set<JSONKey>()
        if case .object(let members) = before { keys.formUnion(members.keys) }
        if case .object(let members) = after { keys.formUnion(members.keys) }
        for key in keys where !key.string.hasPrefix(".") {
            let child = DataPath(uncheckedSegments: path.segments + [key.string])
            guard pattern.mayMatchBelow(child) else { continue }
            if pattern.match(child) != nil { found.insert(child) }
            walk(before.objectValue?[key] ?? .null, after.objectValue?[key] ?? .null, at: child, pattern: pattern, into: &found)
        }
    }

    /// The value at `location` before and after the write, rendered.
    mutating func change(at location: DataPath) throws -> ValueChange {
        entriesVisited += location.count
        if let above = index.firstAbove(location) {
            let entry = entries[above.position]
            let relative = Array(location.segments.dropFirst(entry.path.count))
            let before = Self.value(in: try beforeValue(at: entry.path), at: relative)
            let after = Self.value(in: entry.value ?? .null, at: relative)
            return ValueChange(before: FirebaseTree.render(before), after: FirebaseTree.render(after))
        }
        // At or above the entries: the stored value with every entry below applied, in the
        // write's order.
        let before = try beforeValue(at: location)
        var after = before
        let below = index.atOrBelow(location)
        entriesVisited += below.count + 1
        for position in below {
            let entry = entries[position]
            Self.set(&after, at: entry.path.segments.dropFirst(location.count), to: entry.value)
        }
        return ValueChange(before: FirebaseTree.render(before), after: FirebaseTree.render(after))
    }

    private mutating func beforeValue(at path: DataPath) throws -> JSONValue {
        if let known = beforeAtEntry[path] { return known }
        let value = try view.value(at: path)
        beforeAtEntry[path] = value
        return value
    }

    static func value(in value: JSONValue, at relative: [String]) -> JSONValue {
        var current = value
        for key in relative {
            guard let child = current.objectValue?[JSONKey(key)] else { return .null }
            current = child
        }
        return current
    }

    /// Puts `new` at `relative` below `value` (nil deletes); objects left with no visible
    /// child vanish, and a leaf with a priority becomes an object. In place: each object on
    /// the way is taken out of its parent while it changes, so it is copied at most once
    /// (when the value before the write still shares it), not once per entry.
    static func set(_ value: inout JSONValue, at relative: ArraySlice<String>, to new: JSONValue?) {
        guard let first = relative.first else {
            value = new ?? .null
            return
        }
        var members: [JSONKey: JSONValue] = [:]
        if case .object(let current) = value { members = current }
        value = .null  // `members` is now the only reference to the object's storage
        let key = JSONKey(first)
        var child = members.removeValue(forKey: key) ?? .null
        set(&child, at: relative.dropFirst(), to: new)
        if child != .null { members[key] = child }
        members[".value"] = nil
        // Stops at the first visible key: an object has at most two hidden ones.
        let visible = members.keys.contains { !$0.string.hasPrefix(".") }
        value = visible ? .object(members) : .null
    }
}
