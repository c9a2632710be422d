import Dispatch
import HearthHTTP
import HearthJSON
import HearthStreams
import HearthWire

/// A listen's events as wire pushes: `d` (overwrite) for a put, `m` (merge) for a patch,
/// at the absolute path, with the listen's tag for a query.
///
/// Three words, so the hub's `any StreamEventSink` holds it inline (no allocation per
/// listen): the tag is stored with `noTag` for none.
struct WireListenSink: StreamEventSink {
    let session: WireSession
    let path: DataPath
    /// The tag, `noTag` for none (what `StreamContext.prepareBroadcast` groups listens by).
    let rawTag: Int64

    static let noTag = Int64.min

    init(session: WireSession, path: DataPath, tag: Int64?) {
        self.session = session
        self.path = path
        self.rawTag = tag ?? Self.noTag
    }

    var tag: Int64? { rawTag == Self.noTag ? nil : rawTag }

    func deliver(_ event: StreamEvent, seq: Int64) {
        session.pushNow(push(event))
    }

    /// Encodes the first pushes now, on the reader that read them (`Database.listen`
    /// starts the listen there).
    func prepareEvents(_ initial: [(event: StreamEvent, seq: Int64)]) -> PreparedEvents {
        let pushes = initial.map { push($0.event) }
        return PreparedEvents { [session] in for bytes in pushes { session.pushNow(bytes) } }
    }

    /// The `d` or `m` push of `event` for this listen. The same for every untagged listen
    /// on one location, so `StreamContext.prepareBroadcast` encodes it once for all of them.
    func push(_ event: StreamEvent) -> [UInt8] {
        var target = path
        if event.path != "/", let relative = try? DataPath(string: event.path), let below = try? path.appending(relative) {
            target = below
        }
        var body: [JSONKey: JSONValue] = ["p": .string(target.description), "d": event.data]
        if let tag { body["t"] = .int(tag) }
        let action = event.name == .put ? "d" : "m"
        return WireOutbound.push(action: action, body: .object(body)).bytes
    }

    /// Where this listen's pushes go, nil once the session is gone.
    var pushSession: (any WireChannel)? { session.pushTarget }

    func ended(_ verdict: StreamVerdict) {
        session.listenEnded(path: path, tag: tag, verdict: verdict)
    }
}
