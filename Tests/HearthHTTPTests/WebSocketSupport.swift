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
