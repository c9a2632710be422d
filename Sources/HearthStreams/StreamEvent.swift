import HearthJSON

/// What one change means for one listened location (docs/protocol/streaming.md §2): the SSE
/// event name, the path relative to the location, and the data, already in client form
/// (arrays rendered).
public struct StreamEvent: Sendable, Equatable {
    public enum Name: String, Sendable {
        case put
        case patch
    }

    public var name: Name
    /// Relative to the listened location, with a leading slash: `/`, `/x/note`.
    public var path: String
    public var data: JSONValue

    public init(name: Name, path: String, data: JSONValue) {
        self.name = name
        self.path = path
        self.data = data
    }

    /// The event `change` causes at `location`, or nil when it does not touch it.
    ///
    /// - At or below the location: the change as written, with a relative path.
    /// - Above it: the location's part of the written value as `put /` (for a multi-path
    ///   PATCH: `put /` when one entry covers the location, else a `patch /` of the entries
    ///   inside it; entries never overlap, docs/protocol/rest.md §1.2), unless the writer
    ///   saw that the location's value did not change.
    public static func of(_ change: StreamChange, at location: DataPath) -> StreamEvent? {
        if location.isPrefix(of: change.path) {
            let relative = "/" + change.path.segments.dropFirst(location.count).joined(separator: "/")
            switch change.kind {
            case .put:
                return StreamEvent(name: .put, path: relative, data: FirebaseTree.render(change.data))
            case .patch:
                return StreamEvent(name: .patch, path: relative, data: renderEntries(change.data))
            }
        }
        guard change.path.isAncestor(of: location) else { return nil }
        if let unchanged = change.index?.unchanged {
            if unchanged.contains(location) { return nil }
        } else if change.unchangedBelow.contains(location) {
            return nil
        }
        let inside = Array(location.segments.dropFirst(change.path.count))
        switch change.kind {
        case .put:
            return StreamEvent(name: .put, path: "/", data: FirebaseTree.render(descend(change.data, inside[...])))
        case .patch:
            guard case .object(let entries) = change.data else { return nil }
            if let index = change.index, !index.paths.isEmpty { return patchEvent(index, inside) }
            var below: [JSONKey: JSONValue] = [:]
            for (key, value) in entries {
                let entry = segments(of: key)
                if inside.starts(byCodeUnitsWith: entry) {
                    let rest = inside[entry.count...]
                    return StreamEvent(name: .put, path: "/", data: FirebaseTree.render(descend(value, rest)))
                }
                if entry.starts(byCodeUnitsWith: inside) {
                    below[entry.dropFirst(inside.count).joined(separator: "/")] = FirebaseTree.render(value)
                }
            }
            if below.isEmpty { return nil }
            return StreamEvent(name: .patch, path: "/", data: .object(below))
        }
    }

    /// The event of a large multi-path update at `inside` (the location relative to the
    /// change's path), from its index: the entry at or above the location, else the entries
    /// below it. The same event the scan above makes.
    private static func patchEvent(_ index: StreamChangeIndex, _ inside: [String]) -> StreamEvent? {
        let location = DataPath(uncheckedSegments: inside)
        if let above = index.entries.firstAbove(location, orAt: true) {
            return StreamEvent(name: .put, path: "/", data: FirebaseTree.render(descend(index.values[above.position], inside[above.length...])))
        }
        let positions = index.entries.atOrBelow(location)
        if positions.isEmpty { return nil }
        var below: [JSONKey: JSONValue] = [:]
        for position in positions {
            below[JSONKey(index.paths[position].segments.dropFirst(inside.count).joined(separator: "/"))] = FirebaseTree.render(index.values[position])
        }
        return StreamEvent(name: .patch, path: "/", data: .object(below))
    }

    /// A multi-path update's key as path segments (`a/b` → `["a", "b"]`).
    static func segments(of key: JSONKey) -> [String] {
        key.string.split(separator: "/", omittingEmptySubsequences: true).map(String.init)
    }

    private static func descend(_ value: JSONValue, _ path: ArraySlice<String>) -> JSONValue {
        var current = value
        for key in path {
            guard case .object(let children) = current, let child = children[key] else { return .null }
            current = child
        }
        return current
    }

    private static func renderEntries(_ data: JSONValue) -> JSONValue {
        guard case .object(let entries) = data else { return data }
        return .object(entries.mapValues(FirebaseTree.render))
    }
}

/// The bytes of server-sent events in Firebase's streaming format
/// (docs/protocol/streaming.md §2; WHATWG HTML §9.2 event-stream framing): `event:` line,
/// `id:` line for data events, one `data:` line (compact JSON has no newline), blank line.
public enum StreamFrames {
    /// `put`/`patch` with `{"path":…,"data":…}` in Firebase's key order, and `id: <seq>`.
    public static func event(_ event: StreamEvent, id: Int64) -> [UInt8] {
        var out: [UInt8] = []
        append(event: event, id: id, to: &out)
        return out
    }

    public static func append(event: StreamEvent, id: Int64, to out: inout [UInt8]) {
        out.append(contentsOf: "event: ".utf8)
        out.append(contentsOf: event.name.rawValue.utf8)
        out.append(contentsOf: "\nid: ".utf8)
        out.append(contentsOf: String(id).utf8)
        out.append(contentsOf: "\ndata: {\"path\":".utf8)
        JSONWriter.writeString(event.path, into: &out)
        out.append(contentsOf: ",\"data\":".utf8)
        JSONWriter.write(event.data, into: &out)
        out.append(contentsOf: "}\n\n".utf8)
    }

    /// `keep-alive` with `data: null`, which every client ignores
    /// (docs/protocol/streaming.md §2).
    public static let keepAlive: [UInt8] = Array("event: keep-alive\ndata: null\n\n".utf8)
    /// `cancel` with `data: null`: read access is gone or the reader fell behind. `null`,
    /// not a reason string: a JSON string kills the Python Admin SDK's listener thread
    /// (docs/protocol/admin-client.md §5).
    public static let cancel: [UInt8] = Array("event: cancel\ndata: null\n\n".utf8)
    /// `auth_revoked` with the exact unquoted text on which the Python Admin SDK
    /// reconnects with a fresh credential (docs/protocol/admin-client.md §5).
    public static let authRevoked: [UInt8] = Array("event: auth_revoked\ndata: credential is no longer valid\n\n".utf8)
}
