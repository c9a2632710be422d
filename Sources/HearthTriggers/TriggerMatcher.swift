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
/// and a trigger can match a location at each of them, so nothing here looks at every
/// entry for each location: the entry above a location is found by looking its ancestors up
/// (`entryAt`), and the entries at or below it as one run of the entries sorted by path
/// (`byPath`). A location's value after the write is built in place, one change per entry,
/// not copied whole for each (`set`). This runs on the writer, before the write commits:
/// work quadratic in the entries would hold every other write of the database.
struct ChangeReader {
    let view: any TreeView
    let entries: [WriteEntry]
    private var beforeAtEntry: [DataPath: JSONValue] = [:]
    /// The first entry at each path, by its index in `entries`.
    private let entryAt: [DataPath: Int]
    /// Every entry's index, sorted by path segment by segment (code units, a prefix before
    /// its extensions), so the entries at or below a location are a contiguous run.
    private let byPath: [Int]
    /// Entries `change(at:)` has looked at: what the complexity test counts.
    private(set) var entriesVisited = 0

    init(view: any TreeView, entries: [WriteEntry]) {
        (self.view, self.entries) = (view, entries)
        var entryAt: [DataPath: Int] = [:]
        entryAt.reserveCapacity(entries.count)
        for (index, entry) in entries.enumerated() where entryAt[entry.path] == nil {
            entryAt[entry.path] = index
        }
        self.entryAt = entryAt
        byPath = entries.indices.sorted { Self.precedes(entries[$0].path, entries[$1].path) }
    }

    /// Segment by segment, each compared as code units; a proper prefix first. Any order in
    /// which a path's descendants follow it contiguously serves; this one agrees with
    /// `DataPath ==` (code units), which Firebase key order need not.
    static func precedes(_ a: DataPath, _ b: DataPath) -> Bool {
        for (x, y) in zip(a.segments, b.segments) where !x.sameCodeUnits(as: y) {
            return x.utf8.lexicographicallyPrecedes(y.utf8)
        }
        return a.count < b.count
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
        if let index = entryAbove(location) {
            let entry = entries[index]
            let relative = Array(location.segments.dropFirst(entry.path.count))
            let before = Self.value(in: try beforeValue(at: entry.path), at: relative)
            let after = Self.value(in: entry.value ?? .null, at: relative)
            return ValueChange(before: FirebaseTree.render(before), after: FirebaseTree.render(after))
        }
        // At or above the entries: the stored value with every entry below applied, in the
        // write's order.
        let before = try beforeValue(at: location)
        var after = before
        for index in entriesAtOrBelow(location) {
            let entry = entries[index]
            Self.set(&after, at: entry.path.segments.dropFirst(location.count), to: entry.value)
        }
        return ValueChange(before: FirebaseTree.render(before), after: FirebaseTree.render(after))
    }

    /// The first entry (in the write's order) strictly above `location`: one lookup per
    /// ancestor, not a pass over the entries.
    private mutating func entryAbove(_ location: DataPath) -> Int? {
        var first: Int?
        for length in 0..<location.count {
            entriesVisited += 1
            if let index = entryAt[DataPath(uncheckedSegments: Array(location.segments.prefix(length)))] {
                first = min(first ?? index, index)
            }
        }
        return first
    }

    /// The indices of the entries at or below `location`, in the write's order: a binary
    /// search for the run's start in `byPath`, then the run.
    private mutating func entriesAtOrBelow(_ location: DataPath) -> [Int] {
        var low = 0, high = byPath.count
        while low < high {
            entriesVisited += 1
            let middle = (low + high) / 2
            if Self.precedes(entries[byPath[middle]].path, location) { low = middle + 1 } else { high = middle }
        }
        var run: [Int] = []
        while low < byPath.count, location.isPrefix(of: entries[byPath[low]].path) {
            entriesVisited += 1
            run.append(byPath[low])
            low += 1
        }
        return run.sorted()
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
