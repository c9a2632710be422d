import HearthJSON
@testable import HearthStreams
import Testing

/// A large change's index (`StreamChangeIndex`) gives every location the event the scan of
/// its entries gives, and is made only for large changes.
extension StreamEventTests {
    /// The event at `location` as the scan reads a change: the first entry at or above the
    /// location, else the entries below it; nothing for a location left unchanged.
    static func scanned(_ change: StreamChange, at location: DataPath) -> StreamEvent? {
        // At or below the change the index plays no part.
        guard change.path.isAncestor(of: location) else { return StreamEvent.of(change, at: location) }
        if change.unchangedBelow.contains(location) { return nil }
        let inside = Array(location.segments.dropFirst(change.path.count))
        func descend(_ value: JSONValue, _ keys: ArraySlice<String>) -> JSONValue {
            var current = value
            for key in keys { current = current.objectValue?[JSONKey(key)] ?? .null }
            return current
        }
        guard change.kind == .patch else {
            return StreamEvent(name: .put, path: "/", data: FirebaseTree.render(descend(change.data, inside[...])))
        }
        guard case .object(let entries) = change.data else { return nil }
        var below: [JSONKey: JSONValue] = [:]
        for (key, value) in entries {
            let entry = key.string.split(separator: "/").map(String.init)
            if inside.starts(with: entry, by: { $0.sameCodeUnits(as: $1) }) {
                return StreamEvent(name: .put, path: "/", data: FirebaseTree.render(descend(value, inside.dropFirst(entry.count))))
            }
            if entry.starts(with: inside, by: { $0.sameCodeUnits(as: $1) }) {
                below[JSONKey(entry.dropFirst(inside.count).joined(separator: "/"))] = FirebaseTree.render(value)
            }
        }
        return below.isEmpty ? nil : StreamEvent(name: .patch, path: "/", data: .object(below))
    }

    /// 42 entries at depths one to three, with canonically equivalent keys (é precomposed
    /// and not), deletes, an object entry with children below it and an array.
    var largePatch: StreamChange {
        var members: [String] = []
        for index in 0..<20 { members.append("\"a/k\(index)\": {\"n\": \(index)}") }
        for index in 0..<15 { members.append("\"b/c/k\(index)\": \(index % 3 == 0 ? "null" : String(index))") }
        members += [#""d": {"x": {"y": 1}, "z": [1, 2]}"#, "\"e/\u{E9}\": 1", "\"e/e\u{301}\": 2",
                    #""f/g/h": "deep""#, #""f/i": true"#, #""b/other": 5"#, #""k": null"#]
        return StreamChange(seq: 9, path: path("rooms"), kind: .patch, data: json("{" + members.joined(separator: ",") + "}"))
    }

    /// Every prefix of every entry, one and two levels below some, and locations beside them.
    func locations(under change: StreamChange) -> [DataPath] {
        var found: Set<DataPath> = [.root, path("other"), path("rooms/zz"), path("rooms/a/k3/n"), path("rooms/a/k3/n/deeper"),
                                    path("rooms/d/x/y"), path("rooms/d/z/1"), path("rooms/b/c/k99"), path("rooms/e/e")]
        guard case .object(let entries) = change.data else { return [] }
        for key in entries.keys {
            let segments = change.path.segments + key.string.split(separator: "/").map(String.init)
            for length in 0...segments.count { found.insert(DataPath(uncheckedSegments: Array(segments.prefix(length)))) }
        }
        return found.sorted()
    }

    @Test func aLargePatchGivesEachLocationTheEventTheScanGives() {
        let change = largePatch
        #expect(change.index != nil)
        let all = locations(under: change)
        #expect(all.count > 50)
        for location in all {
            #expect(StreamEvent.of(change, at: location) == Self.scanned(change, at: location), "at \(location)")
        }
        // The same entries with the unchanged locations past the index's threshold too.
        var unchanged = change
        unchanged.unchangedBelow = (0..<20).map { path("rooms/a/k\($0)") } + [path("rooms/e/\u{E9}")]
        #expect(unchanged.index?.unchanged?.count == 21)
        for location in all {
            #expect(StreamEvent.of(unchanged, at: location) == Self.scanned(unchanged, at: location), "at \(location), some unchanged")
        }
        #expect(StreamEvent.of(unchanged, at: path("rooms/a/k5")) == nil)
        #expect(StreamEvent.of(unchanged, at: path("rooms/e/e\u{301}")) == StreamEvent(name: .put, path: "/", data: .int(2)))
    }

    /// A put above many listened locations, most of them left as they were: those get no
    /// event, looked up in a set; the others get theirs.
    @Test func aPutWithManyUnchangedLocationsLooksThemUp() {
        let unchanged = (0..<100).map { path("rooms/r\($0)") }
        let change = StreamChange(seq: 2, path: path("rooms"), kind: .put, data: json(#"{"r0": 1, "r100": 2}"#), unchangedBelow: unchanged)
        #expect(change.index?.unchanged?.count == 100 && change.index?.paths.isEmpty == true)
        #expect(StreamEvent.of(change, at: path("rooms/r7")) == nil)
        #expect(StreamEvent.of(change, at: path("rooms/r100")) == StreamEvent(name: .put, path: "/", data: .int(2)))
        #expect(StreamEvent.of(change, at: path("rooms/r101")) == StreamEvent(name: .put, path: "/", data: .null))
    }

    @Test func aSmallChangeHasNoIndex() {
        let entries = (0..<StreamChangeIndex.indexedPast).map { "\"k\($0)\": 1" }.joined(separator: ",")
        var change = StreamChange(seq: 1, path: path("rooms"), kind: .patch, data: json("{" + entries + "}"),
                                  unchangedBelow: (0..<StreamChangeIndex.indexedPast).map { path("rooms/u\($0)") })
        #expect(change.index == nil)
        change.data = json("{" + entries + #", "one/more": 1}"#)
        #expect(change.index != nil)
    }
}
