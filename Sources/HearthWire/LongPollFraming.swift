import HearthJSON

/// The long-poll transport's framing (docs/protocol/wire.md §8; the JS SDK's
/// `BrowserPollConnection` and `PacketReceiver`): what the server's scripts say, and how a
/// client's messages, cut into numbered segments of base64 text across poll URLs, are
/// joined again. Pure: no sessions, no HTTP.
///
/// The page loads each answer as a `<script>` inside a hidden same-origin iframe, while the
/// SDK defines its callbacks (`pLPCommand<cb>`, `pRTLPCB<cb>`) on the parent window: each
/// script calls the one it finds on its own window, else on `parent`. The Firebase server's
/// exact script text is not in the SDK (docs/protocol/wire.md §8 [U]); only the names and
/// arguments are.
public enum LongPollScript {
    /// Longest callback id taken (`cb`: the SDK's `LUIDGenerator`, a small counter).
    public static let maxCallbackDigits = 16

    /// Whether `cb` may name a callback: ASCII digits only, so that it can be written into
    /// a script as part of a name without quoting.
    public static func isCallbackID(_ text: Substring) -> Bool {
        !text.isEmpty && text.utf8.count <= maxCallbackDigits && text.utf8.allSatisfy { $0 >= 48 && $0 <= 57 }
    }

    /// `pLPCommand<cb>('start', id, pw)`: the session's id and password, which the client
    /// puts on every later poll. `id` and `password` must be hex (they are written as-is).
    public static func start(callback: String, id: String, password: String) -> [UInt8] {
        call("pLPCommand", callback, "'start','\(id)','\(password)'")
    }

    /// `pRTLPCB<cb>(n, [messages])`: response `number` (from 0, one more per response that
    /// carries messages; the client re-orders by it) with whole JSON messages.
    public static func data(callback: String, number: Int, messages: [[UInt8]]) -> [UInt8] {
        var arguments = Array("\(number),[".utf8)
        for (index, message) in messages.enumerated() {
            if index > 0 { arguments.append(UInt8(ascii: ",")) }
            arguments += message
        }
        arguments.append(UInt8(ascii: "]"))
        return call("pRTLPCB", callback, arguments)
    }

    /// `pLPCommand<cb>('close'[, last])`: the client closes the transport, after it has
    /// processed response `last` when given.
    public static func close(callback: String, after last: Int?) -> [UInt8] {
        call("pLPCommand", callback, last.map { "'close',\($0)" } ?? "'close'")
    }

    /// The page the SDK loads in its hidden "disconnect frame" (`dframe=t`) as soon as the
    /// session starts: when the page goes away (tab closed, navigation), it tells the
    /// server (`disconn=t`, a GET that outlives the page: `fetch` with `keepalive`, else a
    /// synchronous XHR), so the session ends at once rather than at its idle timeout. The
    /// SDK removes this frame when it closes the transport, which unloads it too.
    /// `path` is the endpoint (`/.lp`); `id` and `password` are hex.
    public static func disconnectFrame(path: String, id: String, password: String) -> [UInt8] {
        let url = "\(path)?disconn=t&id=\(id)&pw=\(password)"
        return Array("""
        <!DOCTYPE html><html><body><script>
        window.addEventListener('pagehide',function(){try{if(window.fetch){fetch('\(url)',{keepalive:true});}else{var x=new XMLHttpRequest();x.open('GET','\(url)',false);x.send();}}catch(e){}});
        </script></body></html>
        """.utf8)
    }

    private static func call(_ name: String, _ callback: String, _ arguments: String) -> [UInt8] {
        call(name, callback, Array(arguments.utf8))
    }

    private static func call(_ name: String, _ callback: String, _ arguments: [UInt8]) -> [UInt8] {
        let function = name + callback
        return Array("(window.\(function)||parent.\(function))(".utf8) + arguments + Array(");\n".utf8)
    }
}

/// Joins a long-poll client's messages from their segments (docs/protocol/wire.md §8). The
/// client base64-encodes each JSON message (web-safe alphabet, `.` as padding), cuts the
/// text into segments of at most 1,840 characters, and numbers every segment from 0 across
/// the session; a poll URL carries `seg<i>`, `ts<i>` (the segments of that message) and
/// `d<i>` for i = 0, 1, ... Two polls can be in flight, so segments may arrive out of
/// order.
public struct LongPollSegments: Sendable {
    /// One segment as a poll carried it.
    public struct Segment: Sendable, Equatable {
        public var number: Int
        public var total: Int
        public var text: String

        public init(number: Int, total: Int, text: String) {
            (self.number, self.total, self.text) = (number, total, text)
        }
    }

    /// Bytes held for segments whose message is not whole yet, at most; each segment
    /// counts at least `segmentOverhead`.
    public let maxHeldBytes: Int
    /// What one held segment costs besides its text.
    public static let segmentOverhead = 64
    private var held: [Int: Segment] = [:]
    private var next = 0
    public private(set) var heldBytes = 0

    public init(maxHeldBytes: Int) {
        self.maxHeldBytes = maxHeldBytes
    }

    /// The segments in a poll's query parameters (`seg0`, `ts0`, `d0`, `seg1`, ...), in
    /// order of `i`, stopping at the first `i` without a `seg`. A `seg` without a valid
    /// `ts` and `d` is malformed.
    public static func parse(_ parameters: [Substring: Substring]) throws(LongPollError) -> [Segment] {
        var segments: [Segment] = []
        var index = 0
        while let number = parameters[Substring("seg\(index)")] {
            guard let number = Int(number), number >= 0,
                  let total = parameters[Substring("ts\(index)")].flatMap({ Int($0) }), total >= 1,
                  let text = parameters[Substring("d\(index)")] else { throw .malformedSegment }
            segments.append(Segment(number: number, total: total, text: String(text)))
            index += 1
        }
        return segments
    }

    /// Takes one segment; returns the messages it completed, in order, as their base64
    /// text. A segment already taken is ignored (a poll the browser sent again).
    public mutating func take(_ segment: Segment) throws(LongPollError) -> [String] {
        guard segment.number >= next, held[segment.number] == nil else { return [] }
        // A message of more segments than could ever be held is refused outright (and
        // `next + total` cannot overflow).
        guard segment.total <= maxHeldBytes / Self.segmentOverhead else { throw .tooMuchHeld }
        let cost = segment.text.utf8.count + Self.segmentOverhead
        guard heldBytes + cost <= maxHeldBytes else { throw .tooMuchHeld }
        held[segment.number] = segment
        heldBytes += cost
        var messages: [String] = []
        while let first = held[next] {
            let range = next..<(next + first.total)
            guard range.allSatisfy({ held[$0] != nil }) else { break }
            var text = ""
            for number in range {
                let part = held.removeValue(forKey: number)!
                heldBytes -= part.text.utf8.count + Self.segmentOverhead
                text += part.text
            }
            messages.append(text)
            next = range.upperBound
        }
        return messages
    }
}

/// Why a long poll's input was refused.
public enum LongPollError: Error, Sendable, Equatable {
    /// A `seg<i>` without a number, a `ts<i>` or a `d<i>`; or a message that is not
    /// base64.
    case malformedSegment
    /// More segment text held than `LongPollSegments.maxHeldBytes`.
    case tooMuchHeld
}
