/// A regular expression compiled to instructions for a Pike VM (Thompson's construction):
/// matching costs O(input length × program size) whatever the pattern, so no pattern can
/// make a rule evaluation blow up (no backtracking, docs/protocol/rules.md §3.5).
struct RegexProgram: Sendable {
    enum Instruction: Sendable {
        /// Consume one scalar equal to this one (already case-folded under `i`).
        case scalar(UInt32)
        /// Consume one scalar that is not a line terminator (`.`).
        case any
        /// Consume one scalar in (or, if negated, not in) `sets[index]`.
        case set(Int, negated: Bool)
        case split(Int, Int)
        case jump(Int)
        case match
    }

    /// Patterns that compile to more instructions are rejected at load time.
    static let maxInstructions = 10_000

    /// Cap on the precomputed ε-closure entries of one program (see `closures`).
    static let maxClosureEntries = 100_000

    private(set) var instructions: [Instruction] = []
    private(set) var sets: [ScalarSet] = []
    let caseInsensitive: Bool
    /// For every instruction, the consuming instructions reachable from it without
    /// consuming input (through `jump`/`split`), flattened: the list for `pc` is
    /// `closureEntries[closureStarts[pc]..<closureStarts[pc + 1]]`. Precomputed so the VM
    /// does no graph walk per input scalar.
    private(set) var closureStarts: [Int32] = []
    private(set) var closureEntries: [Int32] = []
    /// Whether `match` is reachable from `pc` without consuming input.
    private(set) var closureMatches: [Bool] = []

    init(_ node: RegexNode, caseInsensitive: Bool) throws(RegexError) {
        self.caseInsensitive = caseInsensitive
        try emit(node)
        instructions.append(.match)
        try computeClosures()
    }

    private mutating func computeClosures() throws(RegexError) {
        let count = instructions.count
        var seen = [Int](repeating: -1, count: count)
        var stack: [Int] = []
        closureStarts.reserveCapacity(count + 1)
        closureMatches.reserveCapacity(count)
        for start in 0..<count {
            closureStarts.append(Int32(closureEntries.count))
            var matches = false
            stack.append(start)
            while let pc = stack.popLast() {
                if seen[pc] == start { continue }
                seen[pc] = start
                switch instructions[pc] {
                case .jump(let target):
                    stack.append(target)
                case .split(let first, let second):
                    stack.append(second)
                    stack.append(first)
                case .match:
                    matches = true
                case .scalar, .any, .set:
                    closureEntries.append(Int32(pc))
                }
            }
            closureMatches.append(matches)
            if closureEntries.count > Self.maxClosureEntries {
                throw RegexError(offset: 0, message: "regular expression is too complex")
            }
        }
        closureStarts.append(Int32(closureEntries.count))
    }

    private mutating func append(_ instruction: Instruction) throws(RegexError) -> Int {
        guard instructions.count < Self.maxInstructions else {
            throw RegexError(offset: 0, message: "regular expression is too large")
        }
        instructions.append(instruction)
        return instructions.count - 1
    }

    private mutating func emit(_ node: RegexNode) throws(RegexError) {
        switch node {
        case .empty:
            break
        case .scalar(let value):
            _ = try append(.scalar(caseInsensitive ? CaseFolding.lower(value) : value))
        case .anyExceptLineTerminator:
            _ = try append(.any)
        case .set(let set, let negated):
            sets.append(set)
            _ = try append(.set(sets.count - 1, negated: negated))
        case .concat(let items):
            for item in items { try emit(item) }
        case .alternate(let branches):
            var jumpsToEnd: [Int] = []
            for (position, branch) in branches.enumerated() {
                if position == branches.count - 1 {
                    try emit(branch)
                } else {
                    let split = try append(.split(0, 0))
                    try emit(branch)
                    jumpsToEnd.append(try append(.jump(0)))
                    instructions[split] = .split(split + 1, instructions.count)
                }
            }
            for jump in jumpsToEnd { instructions[jump] = .jump(instructions.count) }
        case .repetition(let body, let min, let max):
            for _ in 0..<min { try emit(body) }
            if let max {
                // (body (body (…)?)?)? : each optional copy may stop the chain.
                var splits: [Int] = []
                for _ in min..<max {
                    splits.append(try append(.split(0, 0)))
                    try emit(body)
                }
                for split in splits { instructions[split] = .split(split + 1, instructions.count) }
            } else {
                let split = try append(.split(0, 0))
                try emit(body)
                _ = try append(.jump(split))
                instructions[split] = .split(split + 1, instructions.count)
            }
        }
    }
}
