/// An incremental parser of the frames a client sends (RFC 6455 §5), fed bytes as they
/// arrive, handing out whole messages and control frames. Like `HTTPRequestParser` it reads
/// no socket and is tested from byte literals; every refusal is a `WebSocketError` that
/// knows its close code.
///
/// Limits are checked from a frame's header, before its payload is buffered: a message
/// larger than `WebSocketLimits.maxMessageBytes` is refused while it is announced, so a
/// peer cannot make the server hold more than one bounded message. After the first error
/// the parser hands out nothing more (the connection is closing).
public struct WebSocketFrameParser: Sendable {
    public let limits: WebSocketLimits
    private var buffer: [UInt8] = []
    private var offset = 0
    /// The fragmented message being assembled: its opcode (text or binary) and bytes.
    private var messageOpcode: WebSocketOpcode?
    private var message: [UInt8] = []
    private var utf8 = UTF8Validator()
    public private(set) var failure: WebSocketError?

    public init(limits: WebSocketLimits) {
        self.limits = limits
    }

    /// Bytes received and not yet handed out as an event (for read-ahead bounds).
    public var bufferedByteCount: Int { buffer.count - offset + message.count }

    /// Memory held for input not handed out yet, as allocated (the receive buffer's and the
    /// joined fragments' capacity, growth included): what `HTTPLimits.maxIncompleteBytes`
    /// counts. 0 when nothing is pending (an idle session's small buffer is not counted).
    public var heldByteCount: Int { bufferedByteCount == 0 ? 0 : buffer.capacity + message.capacity }

    public mutating func feed(_ bytes: UnsafeRawBufferPointer) {
        guard failure == nil else { return }
        buffer.append(contentsOf: bytes)
    }

    mutating func feed(_ bytes: [UInt8]) {
        bytes.withUnsafeBytes { feed($0) }
    }

    /// The next event, an error (once), or nil when more bytes are needed.
    public mutating func next() -> Result<WebSocketEvent, WebSocketError>? {
        guard failure == nil else { return nil }
        while true {
            let frame: Frame
            switch parseFrame() {
            case nil: compact(); return nil
            case .failure(let error):
                failure = error
                buffer = []
                offset = 0
                message = []
                return .failure(error)
            case .success(let parsed): frame = parsed
            }
            switch handle(frame) {
            case nil: continue  // a fragment that does not end its message
            case .failure(let error)?:
                failure = error
                buffer = []
                offset = 0
                message = []
                return .failure(error)
            case .success(let event)?:
                compact()
                return .success(event)
            }
        }
    }

    // MARK: Frames

    private struct Frame {
        var fin: Bool
        var opcode: WebSocketOpcode
        var payload: [UInt8]
    }

    /// One whole frame from the buffer, unmasked; nil until all of it has arrived.
    private mutating func parseFrame() -> Result<Frame, WebSocketError>? {
        let available = buffer.count - offset
        guard available >= 2 else { return nil }
        let first = buffer[offset], second = buffer[offset + 1]
        let fin = first & 0x80 != 0
        guard first & 0x70 == 0 else { return .failure(.reservedBitsSet) }
        guard let opcode = WebSocketOpcode(rawValue: first & 0x0F) else { return .failure(.unknownOpcode) }
        guard second & 0x80 != 0 else { return .failure(.unmaskedFrame) }
        var headerLength = 2
        var length = UInt64(second & 0x7F)
        if length == 126 {
            guard available >= 4 else { return nil }
            length = UInt64(buffer[offset + 2]) << 8 | UInt64(buffer[offset + 3])
            headerLength = 4
        } else if length == 127 {
            guard available >= 10 else { return nil }
            length = 0
            for i in 2..<10 { length = length << 8 | UInt64(buffer[offset + i]) }
            guard length & (1 << 63) == 0 else { return .failure(.invalidLength) }
            headerLength = 10
        }
        if opcode.isControl {
            guard fin else { return .failure(.fragmentedControlFrame) }
            guard length <= UInt64(WebSocketLimits.maxControlPayloadBytes) else { return .failure(.controlFrameTooLong) }
        } else {
            if opcode == .continuation {
                guard messageOpcode != nil else { return .failure(.unexpectedContinuation) }
            } else if messageOpcode != nil {
                return .failure(.expectedContinuation)
            }
            guard length <= UInt64(max(0, limits.maxMessageBytes - message.count)) else { return .failure(.messageTooBig) }
        }
        let maskStart = offset + headerLength
        let payloadStart = maskStart + 4
        guard buffer.count >= payloadStart, UInt64(buffer.count - payloadStart) >= length else { return nil }
        return frame(fin: fin, opcode: opcode, maskStart: maskStart, payloadStart: payloadStart, length: Int(length))
    }

    private mutating func frame(fin: Bool, opcode: WebSocketOpcode, maskStart: Int, payloadStart: Int, length: Int) -> Result<Frame, WebSocketError> {
        let mask = (buffer[maskStart], buffer[maskStart + 1], buffer[maskStart + 2], buffer[maskStart + 3])
        if length >= Self.keptCapacity && payloadStart + length == buffer.count {
            // A large frame that ends the buffer: the buffer becomes the payload (its head
            // moved out in place) rather than being copied, so a 16 MiB frame never costs
            // twice its size at once (memory counted by `heldByteCount`).
            var payload = buffer
            buffer = []
            offset = 0
            payload.removeSubrange(0..<payloadStart)
            Self.unmask(&payload, key: mask)
            return .success(Frame(fin: fin, opcode: opcode, payload: payload))
        }
        var payload = Array(buffer[payloadStart..<(payloadStart + length)])
        Self.unmask(&payload, key: mask)
        offset = payloadStart + length
        return .success(Frame(fin: fin, opcode: opcode, payload: payload))
    }

    /// XORs the payload with the four-byte masking key (§5.3).
    static func unmask(_ payload: inout [UInt8], key: (UInt8, UInt8, UInt8, UInt8)) {
        payload.withUnsafeMutableBufferPointer { bytes in
            var i = 0
            let n = bytes.count
            while i + 4 <= n {
                bytes[i] ^= key.0
                bytes[i + 1] ^= key.1
                bytes[i + 2] ^= key.2
                bytes[i + 3] ^= key.3
                i += 4
            }
            if i < n { bytes[i] ^= key.0 }
            if i + 1 < n { bytes[i + 1] ^= key.1 }
            if i + 2 < n { bytes[i + 2] ^= key.2 }
        }
    }

    /// Turns a frame into an event, or nil for a fragment whose message goes on.
    private mutating func handle(_ frame: Frame) -> Result<WebSocketEvent, WebSocketError>? {
        switch frame.opcode {
        case .ping: return .success(.ping(frame.payload))
        case .pong: return .success(.pong(frame.payload))
        case .close: return Self.closeEvent(frame.payload)
        case .text, .binary, .continuation:
            let opcode = frame.opcode == .continuation ? messageOpcode! : frame.opcode
            if opcode == .text && !utf8.feed(frame.payload) { return .failure(.invalidUTF8) }
            if messageOpcode == nil && frame.fin {
                // An unfragmented message: no copy into the assembly buffer.
                return finish(opcode, frame.payload)
            }
            if message.isEmpty {
                message = frame.payload  // the first fragment: kept, not copied
            } else {
                message.append(contentsOf: frame.payload)
            }
            messageOpcode = opcode
            guard frame.fin else { return nil }
            let whole = message
            message = []
            messageOpcode = nil
            return finish(opcode, whole)
        }
    }

    private mutating func finish(_ opcode: WebSocketOpcode, _ bytes: [UInt8]) -> Result<WebSocketEvent, WebSocketError> {
        if opcode == .text {
            let complete = utf8.isComplete
            utf8 = UTF8Validator()
            guard complete else { return .failure(.invalidUTF8) }
            return .success(.text(bytes))
        }
        return .success(.binary(bytes))
    }

    /// A close frame's body: empty, or a valid two-byte code and a UTF-8 reason (§5.5.1).
    static func closeEvent(_ payload: [UInt8]) -> Result<WebSocketEvent, WebSocketError> {
        if payload.isEmpty { return .success(.close(code: nil, reason: "")) }
        guard payload.count >= 2 else { return .failure(.invalidClosePayload) }
        let code = WebSocketCloseCode(rawValue: UInt16(payload[0]) << 8 | UInt16(payload[1]))
        guard code.isValidOnTheWire else { return .failure(.invalidCloseCode) }
        let reason = payload[2...]
        guard UTF8Validator.isValid(reason) else { return .failure(.invalidUTF8) }
        return .success(.close(code: code, reason: String(decoding: reason, as: UTF8.self)))
    }

    /// Drops consumed bytes once they are a good part of the buffer, so a long session does
    /// not keep everything it ever received.
    private mutating func compact() {
        if offset == buffer.count {
            buffer.removeAll(keepingCapacity: buffer.capacity <= Self.keptIdleCapacity)
            offset = 0
        } else if offset > Self.keptCapacity {
            buffer.removeFirst(offset)
            offset = 0
        }
    }

    /// Consumed bytes past which a partly read buffer is compacted.
    static let keptCapacity = 64 * 1024
    /// Receive-buffer capacity an idle session keeps (more is released once everything was
    /// consumed): an idle connection should not hold what its largest message needed (a
    /// wire client's ~1 KB sign-in cost ~1 KiB per connection for as long as it stayed
    /// open, docs/bench/history.md, "Wire protocol").
    static let keptIdleCapacity = 256
}
