/// Thompson-NFA simulation (a Pike VM without captures): keeps the set of live consuming
/// instructions and advances them all one input scalar at a time, so matching is linear
/// in the input for a fixed program. A pathological pattern such as `/^(a+)+$/` costs the
/// same as `/^a+$/`. ε-closures are precomputed by `RegexProgram`.
struct PikeVM {
    let program: RegexProgram
    let anchoredStart: Bool
    let anchoredEnd: Bool

    func run(_ input: String) -> Bool {
        var steps = 0
        return run(input, steps: &steps)
    }

    /// `run`, also adding to `steps` the live instructions it advanced over the input: at
    /// most (scalars + 1) × instructions, whatever the pattern (what makes it linear).
    func run(_ input: String, steps: inout Int) -> Bool {
        var text = input
        return text.withUTF8 { bytes in run(bytes, steps: &steps) }
    }

    private func run(_ bytes: UnsafeBufferPointer<UInt8>, steps: inout Int) -> Bool {
        let instructions = program.instructions
        let starts = program.closureStarts
        let entries = program.closureEntries
        let closureMatches = program.closureMatches
        let foldCase = program.caseInsensitive
        var current: [Int32] = []
        var next: [Int32] = []
        current.reserveCapacity(instructions.count)
        next.reserveCapacity(instructions.count)
        /// `mark[pc] == generation`: pc is already in the list being built.
        var mark = [UInt32](repeating: 0, count: instructions.count)
        var generation: UInt32 = 1

        /// Adds the closure of `pc` to `list`; returns whether it reaches `match`.
        func add(_ pc: Int, to list: inout [Int32]) -> Bool {
            for index in Int(starts[pc])..<Int(starts[pc + 1]) {
                let target = Int(entries[index])
                if mark[target] != generation {
                    mark[target] = generation
                    list.append(Int32(target))
                }
            }
            return closureMatches[pc]
        }

        var matchedHere = add(0, to: &current)
        var index = 0
        let count = bytes.count
        while true {
            let atEnd = index >= count
            if matchedHere && (!anchoredEnd || atEnd) { return true }
            if atEnd { return false }
            // Decode one scalar (the buffer is valid UTF-8).
            let lead = bytes[index]
            var scalar: UInt32
            if lead < 0x80 {
                scalar = UInt32(lead)
                index += 1
            } else if lead < 0xE0 {
                scalar = UInt32(lead & 0x1F) << 6 | UInt32(bytes[index + 1] & 0x3F)
                index += 2
            } else if lead < 0xF0 {
                scalar = UInt32(lead & 0x0F) << 12 | UInt32(bytes[index + 1] & 0x3F) << 6 | UInt32(bytes[index + 2] & 0x3F)
                index += 3
            } else {
                scalar = UInt32(lead & 0x07) << 18 | UInt32(bytes[index + 1] & 0x3F) << 12
                    | UInt32(bytes[index + 2] & 0x3F) << 6 | UInt32(bytes[index + 3] & 0x3F)
                index += 4
            }
            let folded = foldCase ? CaseFolding.lower(scalar) : scalar

            generation &+= 1
            if generation == 0 {
                for slot in mark.indices { mark[slot] = 0 }
                generation = 1
            }
            next.removeAll(keepingCapacity: true)
            matchedHere = false
            steps += current.count
            for pc in current {
                let consumes: Bool
                switch instructions[Int(pc)] {
                case .scalar(let expected):
                    consumes = folded == expected
                case .any:
                    consumes = scalar != 0x0A && scalar != 0x0D && scalar != 0x2028 && scalar != 0x2029
                case .set(let setIndex, let negated):
                    let set = program.sets[setIndex]
                    var member = set.contains(scalar)
                    if !member && foldCase {
                        member = set.contains(CaseFolding.lower(scalar)) || set.contains(CaseFolding.upper(scalar))
                    }
                    consumes = member != negated
                case .split, .jump, .match:
                    consumes = false
                }
                if consumes, add(Int(pc) + 1, to: &next) { matchedHere = true }
            }
            if !anchoredStart, add(0, to: &next) { matchedHere = true }
            swap(&current, &next)
            if current.isEmpty && anchoredStart && !matchedHere { return false }
        }
    }
}
