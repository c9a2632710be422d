import HearthJSON
import HearthSQLite
import HearthStore
import HearthTesting
import Testing
@testable import HearthTriggers

/// `ChangeReader` against the plain reading of its contract, and what a write with many
/// entries costs it (on `TriggerMatcherTests`' store, its seed replaced).
extension TriggerMatcherTests {
    static let changeReaderSeed = #"""
        {"a": {"x": {"n": 1, "m": 2}, "y": 3, "é": {"k": 1}},
         "b": {"c": {"d": 4}},
         "p": {".priority": 5, "q": 1},
         "leaf": 7}
        """#

    func seedForChangeReader() throws {
        let seed = try JSONParser.parse(Self.changeReaderSeed)
        _ = try store.writeSync(.set(WriteEntry(path: .root, value: FirebaseTree.normalize(seed, at: .root))), check: nil)
    }

    static func entry(_ path: String, _ value: String?) -> WriteEntry {
        WriteEntry(path: Self.path(path), value: value.map { try! JSONParser.parse($0) })
    }

    /// What `change(at:)` must give, spelled out the simplest way: the first entry (in the
    /// write's order) strictly above the location, else the stored value with every entry at
    /// or below it applied one after another, each on a copy.
    static func expected(_ view: any TreeView, _ entries: [WriteEntry], at location: DataPath) throws -> ValueChange {
        if let entry = entries.first(where: { $0.path.isAncestor(of: location) }) {
            let relative = Array(location.segments.dropFirst(entry.path.count))
            let before = ChangeReader.value(in: try view.value(at: entry.path), at: relative)
            let after = ChangeReader.value(in: entry.value ?? .null, at: relative)
            return ValueChange(before: FirebaseTree.render(before), after: FirebaseTree.render(after))
        }
        let before = try view.value(at: location)
        var after = before
        for entry in entries where location.isPrefix(of: entry.path) {
            after = setting(after, at: entry.path.segments.dropFirst(location.count), to: entry.value)
        }
        return ValueChange(before: FirebaseTree.render(before), after: FirebaseTree.render(after))
    }

    static func setting(_ value: JSONValue, at relative: ArraySlice<String>, to new: JSONValue?) -> JSONValue {
        guard let key = relative.first else { return new ?? .null }
        var members = value.objectValue ?? [:]
        let child = setting(members[JSONKey(key)] ?? .null, at: relative.dropFirst(), to: new)
        members[JSONKey(key)] = child == .null ? nil : child
        members[".value"] = nil
        return members.keys.contains { !$0.string.hasPrefix(".") } ? .object(members) : .null
    }

    /// Every location at, above and one level below each entry, and some beside them.
    static func locations(_ entries: [WriteEntry]) -> [DataPath] {
        var found = Set<DataPath>([path("/zz"), path("/a/x/n/deeper"), path("/b/c/d")])
        for entry in entries {
            for length in 0...entry.path.count { found.insert(DataPath(uncheckedSegments: Array(entry.path.segments.prefix(length)))) }
            found.insert(DataPath(uncheckedSegments: entry.path.segments + ["n"]))
        }
        return found.sorted()
    }

    @Test(arguments: [
        // a multi-location update as the REST API makes it: no entry above another
        [entry("/a/x/n", "10"), entry("/a/y", nil), entry("/b/c/e", #"{"f": 1}"#), entry("/new/z", "1")],
        // a set above stored data, and one at the root
        [entry("/a", #"{"x": {"n": 1}}"#)],
        [entry("/", #"{"only": 1}"#)],
        // every child of a location removed, then one added in the same write
        [entry("/a/x/n", nil), entry("/a/x/m", nil), entry("/a/x/o", "1")],
        // the child of a location with a priority removed (the priority alone does not keep it)
        [entry("/p/q", nil)], [entry("/p/q", nil), entry("/p/r", "2")],
        // below a leaf, which becomes an object
        [entry("/leaf/sub", "1")],
        // keys that are canonically equivalent but different locations (é precomposed and not)
        [entry("/a/é/k", "2"), entry("/a/e\u{301}/k", "3")],
        // entries that overlap and repeat (no REST or wire write makes these; the order of the
        // write decides, as it does for the store)
        [entry("/a/x", #"{"n": 5}"#), entry("/a/x/n", "6"), entry("/a", nil), entry("/a/x/m", "7"), entry("/a/x/n", "8")],
        [entry("/b/c/d", "1"), entry("/b", #"{"c": 2}"#)],
    ])
    func aChangeIsTheWritesEntriesAppliedInOrder(_ entries: [WriteEntry]) throws {
        try seedForChangeReader()
        try store.readSync { view in
            var reader = ChangeReader(view: view, entries: entries)
            for location in Self.locations(entries) {
                let change = try reader.change(at: location)
                #expect(change == (try Self.expected(view, entries, at: location)), "at \(location) after \(entries.map(\.path))")
            }
        }
    }

    /// A multi-location update of many children under triggers at, above and below them:
    /// the events are right, and `change(at:)` looks at a few entries per location (an
    /// index probe per level, then the entries at or below it), not at every entry for each.
    @Test func manyEntriesCostEachLocationAFewLookUps() throws {
        let count = 4_000
        // half the children exist before the write, half are new
        let existing = "{" + (0..<count / 2).map { "\"k\($0)\": {\"v\": \($0)}" }.joined(separator: ",") + "}"
        _ = try store.writeSync(.set(WriteEntry(path: Self.path("/bulk"), value: FirebaseTree.normalize(try JSONParser.parse(existing), at: Self.path("/bulk")))), check: nil)
        let entries = (0..<count).map { Self.entry("/bulk/k\($0)", "{\"v\": \(-$0 - 1)}") }
        let operation = WriteOperation.update(base: Self.path("/bulk"), entries: entries)
        let triggers = [
            TriggerDefinition(name: "created", kind: .created, ref: try RefPattern("/bulk/{id}"), url: TriggerMatcherTests.url),
            TriggerDefinition(name: "parent", kind: .written, ref: try RefPattern("/bulk"), url: TriggerMatcherTests.url),
            TriggerDefinition(name: "below", kind: .written, ref: try RefPattern("/bulk/{id}/v"), url: TriggerMatcherTests.url),
        ]
        try store.readSync { view in
            let events = try TriggerMatcher(triggers: triggers, instance: "hearth").events(
                before: view, applied: operation, auth: EventAuth(type: "admin", id: nil), limit: 3 * count)
            #expect(events.filter { $0.trigger == "created" }.count == count / 2)
            #expect(events.filter { $0.trigger == "below" }.count == count)
            let parent = try #require(events.first { $0.trigger == "parent" })
            #expect(parent.change.after.objectValue?.count == count)
            #expect(parent.change.after.objectValue?["k3999"] == (try JSONParser.parse(#"{"v": -4000}"#)))

            var reader = ChangeReader(view: view, entries: entries)
            var locations = 0
            for trigger in triggers {
                for location in try reader.locations(matching: trigger.ref) {
                    _ = try reader.change(at: location)
                    locations += 1
                }
            }
            #expect(locations == 2 * count + 1)
            // Each location: at most 3 probes (one per level), one more for the entries at or
            // below it, and those entries: one for a child, all of them once for the parent.
            // Looking at every entry for each location would be 8,001 × 4,000.
            #expect(reader.entriesVisited <= locations * (3 + 1 + 1) + count)
        }
    }
}
