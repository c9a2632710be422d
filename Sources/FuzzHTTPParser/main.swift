// libFuzzer target for HTTPRequestParser (docs/linux-notes.md, "libFuzzer with Swift
// here"). Only declarations: libFuzzer provides `main` in a fuzz build; a plain build links
// an executable that does nothing.
import HearthHTTP

/// Small limits so the fuzzer reaches every limit path quickly.
private func fuzzLimits() -> HTTPLimits {
    var limits = HTTPLimits()
    limits.maxRequestLineBytes = 256
    limits.maxHeaderBytes = 512
    limits.maxHeaderCount = 8
    limits.maxBodyBytes = 1024
    return limits
}

/// Feeds the input (after its first byte) in up to four pieces whose split points come
/// from the first byte, draining every event after each piece. Any crash, trap or
/// sanitizer report is a bug; so is an unbounded number of events.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    guard let data, size > 0 else { return 0 }
    let control = Int(data[0])
    let input = UnsafeBufferPointer(start: data + 1, count: size - 1)
    var parser = HTTPRequestParser(limits: fuzzLimits())

    var cuts = [0]
    if input.count > 0 {
        cuts.append(control & 0x03 == 0 ? 0 : (control * 7) % (input.count + 1))
        cuts.append(control & 0x0C == 0 ? input.count : (control * 13) % (input.count + 1))
        cuts.append(control & 0x30 == 0 ? input.count : (control * 31) % (input.count + 1))
    }
    cuts.append(input.count)
    cuts.sort()

    var events = 0
    for i in 0..<(cuts.count - 1) where cuts[i] < cuts[i + 1] {
        parser.feed(UnsafeRawBufferPointer(UnsafeBufferPointer(rebasing: input[cuts[i]..<cuts[i + 1]])))
        while let event = parser.next() {
            events += 1
            precondition(events <= input.count + 1, "parser produced more events than input bytes")
            switch event {
            case .request(let request, _):
                precondition(request.body.count <= 1024, "body over the limit")
            case .error(let error):
                precondition([400, 413, 414, 417, 431, 501, 505].contains(error.status))
            case .continueExpected:
                break
            }
        }
    }
    return 0
}
