/// The rules file as bytes, with a line table so that byte offsets found by the reader and
/// the expression compiler can be reported as 1-based line and column
/// (docs/protocol/rules.md §3.6: a deploy error names where the problem is).
struct SourceText: Sendable {
    let bytes: [UInt8]
    /// Byte offset at which each line starts; `lineStarts[0] == 0`.
    let lineStarts: [Int]

    init(_ text: String) {
        let bytes = Array(text.utf8)
        var starts = [0]
        for (index, byte) in bytes.enumerated() where byte == UInt8(ascii: "\n") {
            starts.append(index + 1)
        }
        self.bytes = bytes
        self.lineStarts = starts
    }

    /// Line and column of the byte at `offset`. Columns count Unicode scalars, so a
    /// column matches what an editor shows for non-ASCII text too.
    func location(ofByte offset: Int) -> (line: Int, column: Int) {
        location(ofByte: offset, after: nil)
    }

    /// A place in the file: its byte offset, line and column.
    struct Place {
        let offset: Int
        let line: Int
        let column: Int
    }

    /// `location(ofByte:)`, counting the column on from `previous` when it is earlier on
    /// the same line: locating many offsets in file order (coverage sites) then costs the
    /// line's length once, not once per offset (a minified file is one long line).
    func location(ofByte offset: Int, after previous: Place?) -> (line: Int, column: Int) {
        let clamped = max(0, min(offset, bytes.count))
        var low = 0
        var high = lineStarts.count - 1
        while low < high {
            let mid = (low + high + 1) / 2
            if lineStarts[mid] <= clamped { low = mid } else { high = mid - 1 }
        }
        var column = 1
        var index = lineStarts[low]
        if let previous, previous.line == low + 1, previous.offset <= clamped, previous.offset >= index {
            (column, index) = (previous.column, previous.offset)
        }
        while index < clamped {
            if bytes[index] & 0xC0 != 0x80 { column += 1 }
            index += 1
        }
        // Started inside a multi-byte scalar: do not count its own lead byte twice.
        return (low + 1, column)
    }
}
