/// Where things are in a JSON text, for errors that name a line: the parser reports byte
/// offsets, and a trigger found invalid after parsing is pointed at by its element's start.
enum JSONPositions {
    /// The 1-based line of byte `offset`.
    static func line(of offset: Int, in bytes: [UInt8]) -> Int {
        1 + bytes.prefix(max(0, min(offset, bytes.count))).reduce(0) { $0 + ($1 == UInt8(ascii: "\n") ? 1 : 0) }
    }

    /// The byte offsets where the elements of the top-level object's array member `name`
    /// start (empty when there is none). Assumes `bytes` parsed as JSON.
    static func elementOffsets(ofArrayMember name: String, in bytes: [UInt8]) -> [Int] {
        var depth = 0
        var index = 0
        var lastString: [UInt8] = []
        var expectingValueOf: [UInt8]? = nil
        var inTarget = false
        var awaitingElement = false
        var offsets: [Int] = []
        let wanted = Array(name.utf8)
        while index < bytes.count {
            let byte = bytes[index]
            switch byte {
            case UInt8(ascii: "\""):
                let start = index + 1
                index += 1
                while index < bytes.count && bytes[index] != UInt8(ascii: "\"") {
                    index += bytes[index] == UInt8(ascii: "\\") ? 2 : 1
                }
                if inTarget && depth == 2 && awaitingElement {
                    offsets.append(start - 1)
                    awaitingElement = false
                }
                lastString = Array(bytes[start..<min(index, bytes.count)])
            case UInt8(ascii: ":"):
                if depth == 1 { expectingValueOf = lastString }
            case UInt8(ascii: "{"), UInt8(ascii: "["):
                if inTarget && depth == 2 && awaitingElement {
                    offsets.append(index)
                    awaitingElement = false
                }
                depth += 1
                if depth == 2 && byte == UInt8(ascii: "[") && expectingValueOf == wanted {
                    inTarget = true
                    awaitingElement = true
                }
            case UInt8(ascii: "}"), UInt8(ascii: "]"):
                depth -= 1
                if depth == 1 { inTarget = false }
            case UInt8(ascii: ","):
                if inTarget && depth == 2 { awaitingElement = true }
                if depth == 1 { expectingValueOf = nil }
            case UInt8(ascii: " "), UInt8(ascii: "\n"), UInt8(ascii: "\r"), UInt8(ascii: "\t"):
                break
            default:
                if inTarget && depth == 2 && awaitingElement {
                    offsets.append(index)
                    awaitingElement = false
                }
            }
            index += 1
        }
        return offsets
    }
}
