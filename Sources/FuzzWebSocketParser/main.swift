// libFuzzer target for WebSocketFrameParser (docs/linux-notes.md, "libFuzzer with Swift
// here"). Only declarations: libFuzzer provides `main` in a fuzz build; a plain build links
// an executable that does nothing.
import HearthHTTP
import HearthWire

/// A small message limit so the fuzzer reaches the limit paths quickly.
private let maxMessageBytes = 2048

/// Feeds the input (after its first byte) in up to four pieces whose split points come
/// from the first byte, draining every event after each piece. Any crash, trap or
/// sanitizer report is a bug; so is an event the parser must never hand out.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    guard let data, size > 0 else { return 0 }
    let control = Int(data[0])
    let input = UnsafeBufferPointer(start: data + 1, count: size - 1)
    var limits = WebSocketLimits()
    limits.maxMessageBytes = maxMessageBytes
    var parser = WebSocketFrameParser(limits: limits)
    // Text messages go on to the wire protocol's chunk joining, as on /.ws.
    var wireLimits = WireLimits()
    wireLimits.maxMessageBytes = maxMessageBytes
    wireLimits.maxChunks = 8
    var assembler = WireFrameAssembler(limits: wireLimits)
    var assemblerFailed = false

    var cuts = [0]
    if input.count > 0 {
        cuts.append(control & 0x03 == 0 ? 0 : (control * 7) % (input.count + 1))
        cuts.append(control & 0x0C == 0 ? input.count : (control * 13) % (input.count + 1))
        cuts.append(control & 0x30 == 0 ? input.count : (control * 31) % (input.count + 1))
    }
    cuts.append(input.count)
    cuts.sort()

    var events = 0
    var failed = false
    for i in 0..<(cuts.count - 1) where cuts[i] < cuts[i + 1] {
        parser.feed(UnsafeRawBufferPointer(UnsafeBufferPointer(rebasing: input[cuts[i]..<cuts[i + 1]])))
        // What an incomplete message holds (counted against the server's bound) is never
        // more than was received.
        precondition(parser.bufferedByteCount <= cuts[i + 1], "more bytes held than received")
        while let result = parser.next() {
            precondition(parser.bufferedByteCount <= cuts[i + 1], "more bytes held than received")
            precondition(!failed, "an event after an error")
            events += 1
            precondition(events <= input.count / 2 + 1, "more events than frames could fit in the input")
            switch result {
            case .success(.text(let bytes)):
                precondition(bytes.count <= maxMessageBytes, "message over the limit")
                precondition(String(validating: bytes, as: UTF8.self) != nil, "invalid UTF-8 handed out as text")
                if !assemblerFailed {
                    do {
                        if case .message(let whole) = try assembler.take(bytes) {
                            precondition(whole.count <= maxMessageBytes, "joined message over the limit")
                        }
                        // Held as allocated: an array's growth at most doubles what it holds.
                        precondition(assembler.heldByteCount <= 2 * maxMessageBytes + 64, "chunks held past the message limit")
                    } catch {
                        assemblerFailed = true
                    }
                }
            case .success(.binary(let bytes)):
                precondition(bytes.count <= maxMessageBytes, "message over the limit")
            case .success(.ping(let bytes)), .success(.pong(let bytes)):
                precondition(bytes.count <= WebSocketLimits.maxControlPayloadBytes, "control payload over 125 bytes")
            case .success(.close(let code, _)):
                if let code { precondition(code.isValidOnTheWire, "a close code that may not be sent") }
            case .failure:
                failed = true
            }
        }
    }
    return 0
}
