@testable import HearthHTTP

/// A client frame as RFC 6455 §5.2 lays it out, masked with `mask` (clients must mask).
func clientFrame(
    _ opcode: UInt8, _ payload: [UInt8], fin: Bool = true, rsv: UInt8 = 0,
    mask: [UInt8]? = [0x37, 0xFA, 0x21, 0x3D], lengthForm: Int? = nil
) -> [UInt8] {
    var frame: [UInt8] = [(fin ? 0x80 : 0) | (rsv << 4) | opcode]
    let maskBit: UInt8 = mask == nil ? 0 : 0x80
    let form = lengthForm ?? (payload.count < 126 ? 7 : payload.count <= 0xFFFF ? 16 : 64)
    switch form {
    case 7: frame.append(maskBit | UInt8(payload.count))
    case 16:
        frame.append(maskBit | 126)
        frame += [UInt8(payload.count >> 8), UInt8(payload.count & 0xFF)]
    default:
        frame.append(maskBit | 127)
        for shift in stride(from: 56, through: 0, by: -8) { frame.append(UInt8(truncatingIfNeeded: payload.count >> shift)) }
    }
    guard let mask else { return frame + payload }
    frame += mask
    for (i, byte) in payload.enumerated() { frame.append(byte ^ mask[i % 4]) }
    return frame
}

/// Every event the parser hands out for `bytes` fed in one piece, then its failure if any.
func parse(_ bytes: [UInt8], limits: WebSocketLimits = WebSocketLimits()) -> (events: [WebSocketEvent], error: WebSocketError?) {
    var parser = WebSocketFrameParser(limits: limits)
    parser.feed(bytes)
    var events: [WebSocketEvent] = []
    while let result = parser.next() {
        switch result {
        case .success(let event): events.append(event)
        case .failure(let error): return (events, error)
        }
    }
    return (events, nil)
}

extension Array where Element == UInt8 {
    init(_ text: String) { self = Array(text.utf8) }
}

/// A frame as the server sent it (servers never mask).
struct ServerFrame: Equatable {
    var fin: Bool
    var opcode: UInt8
    var payload: [UInt8]

    var text: String { String(decoding: payload, as: UTF8.self) }
    /// A close frame's code.
    var closeCode: UInt16? { opcode == 0x8 && payload.count >= 2 ? UInt16(payload[0]) << 8 | UInt16(payload[1]) : nil }
}

extension RawClient {
    static let sampleKey = "dGhlIHNhbXBsZSBub25jZQ=="

    /// Sends an opening handshake (plus `extra` bytes right behind it) and reads the answer's head.
    func openWebSocket(path: String = "/ws", version: String = "13", extra: [UInt8] = []) throws -> RawResponse? {
        try send(Array("GET \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: \(version)\r\nSec-WebSocket-Key: \(Self.sampleKey)\r\n\r\n".utf8) + extra)
        return try readResponse(head: true)
    }

    func sendFrame(_ opcode: UInt8, _ payload: [UInt8], fin: Bool = true, mask: [UInt8]? = [1, 2, 3, 4]) throws {
        try send(clientFrame(opcode, payload, fin: fin, mask: mask))
    }

    /// The next frame from the server, or nil when the connection ended first.
    func readFrame() -> ServerFrame? {
        guard let head = read(count: 2) else { return nil }
        precondition(head[1] & 0x80 == 0, "the server masked a frame")
        var length = Int(head[1] & 0x7F)
        if length == 126 {
            guard let bytes = read(count: 2) else { return nil }
            length = Int(bytes[0]) << 8 | Int(bytes[1])
        } else if length == 127 {
            guard let bytes = read(count: 8) else { return nil }
            length = bytes.reduce(0) { $0 << 8 | Int($1) }
        }
        guard let payload = read(count: length) else { return nil }
        return ServerFrame(fin: head[0] & 0x80 != 0, opcode: head[0] & 0x0F, payload: payload)
    }
}
