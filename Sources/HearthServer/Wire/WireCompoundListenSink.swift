import HearthJSON
import HearthStreams
import HearthWire
import Synchronization

/// A location listen that carried a compound hash (`ch`, docs/protocol/wire.md §4.2: iOS
/// and Android re-listening with cached data). Its first event, the current value, goes out
/// as one range merge (`rm`, §3.3) of only the ranges whose hash differs from the client's,
/// or as nothing when none does (the `ok` that follows tells the client its cache is
/// current); every later event goes out as for any listen. A value that is not an object,
/// a malformed `ch`, one with more than `CompoundHash.maxCutPaths` cuts, or one whose
/// answer would pass `CompoundHash.workBudget` gets the whole value (`d`), which is always
/// correct and what the SDK applies to a listen it could not hash for.
///
/// The answer is computed with the first event, in `prepareEvents`, on the reader that read
/// the value (`Database.listen` starts the listen there), before the fan-out queue: the
/// hub holds the listen's later events back until the answer is sent. Its cost is
/// O(n log n) in the value, and never more than `CompoundHash.workBudget`.
final class WireCompoundListenSink: StreamEventSink {
    let listen: WireListenSink
    /// The client's hashes and cut paths, until the first event used them.
    private let pending: Mutex<(hashes: [String], posts: [String])?>

    init(listen: WireListenSink, hashes: [String], posts: [String]) {
        self.listen = listen
        self.pending = Mutex((hashes, posts))
    }

    /// `ch` as a listen carries it: `{"hs": [string…], "ps": [string…]}` with at most
    /// `CompoundHash.maxCutPaths` paths; nil when it is anything else (then it is ignored
    /// and the listen gets the whole value).
    static func parse(_ value: JSONValue?) -> (hashes: [String], posts: [String])? {
        guard case .object(let members)? = value, case .array(let hs)? = members["hs"], case .array(let ps)? = members["ps"],
              hs.count == ps.count + 1, ps.count <= CompoundHash.maxCutPaths else { return nil }
        var hashes: [String] = []
        var posts: [String] = []
        for hash in hs { guard case .string(let text) = hash else { return nil }; hashes.append(text) }
        for post in ps { guard case .string(let text) = post else { return nil }; posts.append(text) }
        return (hashes, posts)
    }

    func deliver(_ event: StreamEvent, seq: Int64) {
        if let bytes = push(event) { listen.session.pushNow(bytes) }
    }

    func prepareEvents(_ initial: [(event: StreamEvent, seq: Int64)]) -> PreparedEvents {
        let pushes = initial.compactMap { push($0.event) }
        return PreparedEvents { [session = listen.session] in for bytes in pushes { session.pushNow(bytes) } }
    }

    /// The push of `event`: for the first, the ranges that differ from the client's hashes
    /// (nil when none does); for the others, the listen's own.
    private func push(_ event: StreamEvent) -> [UInt8]? {
        let compound = pending.withLock { pending in
            defer { pending = nil }
            return pending
        }
        if let compound, event.name == .put, event.path == "/", case .object = event.data,
           let ranges = CompoundHash.changedRanges(event.data, hashes: compound.hashes, posts: compound.posts) {
            if ranges.isEmpty { return nil }
            let body: JSONValue = .object(["p": .string(listen.path.description), "d": .array(ranges.map(Self.json))])
            return WireOutbound.push(action: "rm", body: body).bytes
        }
        return listen.push(event)
    }

    /// One range of an `rm`: `s` (after), `e` (up to and including), `m` (its data).
    static func json(_ range: CompoundHash.Range) -> JSONValue {
        var members: [JSONKey: JSONValue] = ["m": range.value]
        if let start = range.start { members["s"] = .string(start) }
        if let end = range.end { members["e"] = .string(end) }
        return .object(members)
    }

    func ended(_ verdict: StreamVerdict) {
        listen.ended(verdict)
    }
}
