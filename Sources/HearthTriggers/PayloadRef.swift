import HearthJSON

/// The `ref` member of a stored event's payload (`MatchedEvent.payload`), found by
/// scanning past the other members' values instead of building them: the deliverer orders
/// every event it reads by it, and a whole parse of the payload (its `data` and `delta`
/// come first) cost a tenth of the server's CPU per delivery.
///
/// The scan handles what this module writes: a top-level object whose keys and `ref`
/// value have no escapes, `ref` once. Anything else (an escape, a shape it does not
/// expect, a second `ref`) is left to the whole parse. The other members' values are
/// skipped, not checked: for a payload the parser would refuse there (which this module
/// never writes) the scan may still name a `ref`; such an event goes to the dead letters
/// when it is encoded for sending, whatever location it was ordered by.
enum PayloadRef {
    static func ref(_ payload: [UInt8]) -> String? {
        switch scan(payload) {
        case .found(let ref): return ref
        case .absent: return nil
        case .unsure:
            guard case .object(let members)? = try? JSONParser.parse(payload), case .string(let ref)? = members["ref"] else { return nil }
            return ref
        }
    }

    enum Scan: Equatable {
        case found(String)
        case absent
        /// Not a shape the scan decides: the whole parse does.
        case unsure
    }

    private static let quote = UInt8(ascii: "\""), backslash = UInt8(ascii: "\\")

    static func scan(_ bytes: [UInt8]) -> Scan {
        var index = 0
        func skipSpace() {
            while index < bytes.count, bytes[index] == 0x20 || bytes[index] == 0x0A || bytes[index] == 0x0D || bytes[index] == 0x09 {
                index += 1
            }
        }
        /// A string without escapes or control characters at `index` (its quote): its bytes.
        func plainString() -> ArraySlice<UInt8>? {
            guard index < bytes.count, bytes[index] == quote else { return nil }
            let start = index + 1
            var end = start
            while end < bytes.count, bytes[end] != quote {
                if bytes[end] == backslash || bytes[end] < 0x20 { return nil }
                end += 1
            }
            guard end < bytes.count else { return nil }
            index = end + 1
            return bytes[start..<end]
        }
        /// Skips one value (strings with escapes included), or nil when it is cut short.
        func skipValue() -> Bool {
            var depth = 0
            repeat {
                guard index < bytes.count else { return false }
                switch bytes[index] {
                case quote:
                    index += 1
                    while index < bytes.count, bytes[index] != quote { index += bytes[index] == backslash ? 2 : 1 }
                    guard index < bytes.count else { return false }
                    index += 1
                case UInt8(ascii: "{"), UInt8(ascii: "["):
                    depth += 1
                    index += 1
                case UInt8(ascii: "}"), UInt8(ascii: "]"):
                    guard depth > 0 else { return false }
                    depth -= 1
                    index += 1
                default:
                    // A literal or a number (or separators inside a container).
                    index += 1
                    if depth == 0 {
                        while index < bytes.count, ![UInt8(ascii: ","), UInt8(ascii: "}"), 0x20, 0x0A, 0x0D, 0x09].contains(bytes[index]) {
                            index += 1
                        }
                    }
                }
            } while depth > 0
            return true
        }
        skipSpace()
        guard index < bytes.count, bytes[index] == UInt8(ascii: "{") else { return .unsure }
        index += 1
        var first = true
        var found: String? = nil
        while true {
            skipSpace()
            guard index < bytes.count else { return .unsure }
            if bytes[index] == UInt8(ascii: "}") {
                index += 1
                skipSpace()
                guard index == bytes.count else { return .unsure }
                return found.map(Scan.found) ?? .absent
            }
            if !first {
                guard bytes[index] == UInt8(ascii: ",") else { return .unsure }
                index += 1
                skipSpace()
            }
            first = false
            guard let key = plainString() else { return .unsure }
            skipSpace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else { return .unsure }
            index += 1
            skipSpace()
            if key.elementsEqual("ref".utf8) {
                guard found == nil, let value = plainString(), let text = String(validating: value, as: UTF8.self) else { return .unsure }
                found = text
            } else {
                guard skipValue() else { return .unsure }
            }
        }
    }
}
