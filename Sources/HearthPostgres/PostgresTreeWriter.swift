import HearthJSON
import HearthStore

/// Applies a batch's writes to the tree inside the writer's transaction with as few
/// statements as the batch allows: writes are queued and sent together, in order, as one
/// call of `hearth_apply_batch` (migration 9), which runs each write's deletes and inserts
/// in turn and logs the changes of those it applied. The queue is sent before any other
/// statement on the connection (`PGConnection.beforeNextStatement`): a check, a fence or an
/// index update that reads the tree sees every earlier write of the batch, as when each
/// write was its own call. The SQLite engine's `TreeWriter` does the same per write.
///
/// A write that would replace more than `maxReplaced` rows changes nothing and takes no
/// change number: the numbers of the writes after it close up (`flush` tells the caller
/// which number each write got).
final class PostgresTreeWriter {
    /// Writes sent in one statement at most: a longer queue is sent in several.
    static let maxWritesPerStatement = 128
    /// Leaf and priority rows sent in one statement at most, unless one write alone has more
    /// (it goes alone): bounds the parameters the writer holds and the server parses.
    static let maxRowsPerStatement = 20_000

    /// What became of a queued write: the change number it took, or nil when it would have
    /// replaced more than `maxReplaced` rows (nothing of it was applied).
    typealias Outcome = (ticket: Int, seq: Int64?)

    private let connection: PGConnection
    private let maxReplaced: Int
    private let at: Int64
    /// The last change number taken (the batch's first write takes this + 1), once known.
    private(set) var lastSeq: Int64
    /// Whether `lastSeq` is known. A batch sent whole in one exchange (`PostgresEngine`)
    /// queues its writes before it holds the ordering lock: `hearth_apply_batch` then numbers
    /// them from the last number as the lock found it, and `learnBase` gives that number
    /// here from the lock's answer, before `received`.
    private(set) var baseKnown: Bool
    /// Set when a write was not queued because the queue was full while the base was not
    /// known: nothing may be sent before the batch's one exchange, so the caller takes the
    /// ordinary path.
    private(set) var full = false
    /// Statements sent (tests count them).
    private(set) var statements = 0
    private var queue = Queue()
    /// The tickets of the writes taken by `takeQueued`, until `received` has their answer.
    private var inFlight: [Int] = []
    /// The outcomes of the writes sent, in the order they were queued.
    private(set) var outcomes: [Outcome] = []

    /// The arrays of `hearth_apply_batch`, for the writes queued.
    private struct Queue {
        var tickets: [Int] = []
        var entries: [String?] = [], entryEnds: [String?] = [], entryWrites: [String?] = []
        /// Whether no entry is the root, equal to or below another write's (`Disjoint`).
        var disjoint = Disjoint()
        var ancestors: [String?] = [], ancestorEnds: [String?] = []
        var leaves = Columns(), leafEnds: [String?] = []
        var priorities = Columns(), priorityEnds: [String?] = []
        var changePaths: [String?] = [], changeKinds: [String?] = [], changeData: [String?] = []
        var rows: Int { leaves.paths.count + priorities.paths.count }
    }

    /// `lastSeq`: the last number before the batch, nil when not known yet (`baseKnown`).
    init(connection: PGConnection, maxReplaced: Int, at: Int64, lastSeq: Int64?) {
        (self.connection, self.maxReplaced, self.at) = (connection, maxReplaced, at)
        (self.lastSeq, baseKnown) = (lastSeq ?? 0, lastSeq != nil)
    }

    /// The last number before the batch, read from the ordering lock's answer in the
    /// exchange that sent the writes (or from the batch's mark when that answer was lost).
    func learnBase(_ base: Int64) {
        guard !baseKnown else { return }
        (lastSeq, baseKnown) = (base, true)
    }

    /// Queues `operation`, logged as `change` (its number is given at `flush`); `ticket`
    /// names it in the outcomes.
    func add(_ operation: WriteOperation, as change: Change, ticket: Int) throws(StoreError) {
        // By code units: a `String` set merges `m/é` and `m/e\u{301}`, and one of them
        // kept its leaf below the write.
        var ancestors: Set<JSONKey> = []
        var leaves: [LeafRow] = [], priorities: [LeafRow] = []
        var entries: [String?] = []
        for entry in operation.entries {
            entries.append(entry.path.storageKey)
            guard let value = entry.value else { continue }
            var ancestor = entry.path
            while let parent = ancestor.parent {
                ancestor = parent
                ancestors.insert(JSONKey(ancestor.storageKey))
            }
            LeafRow.flatten(value, at: entry.path.storageKey, into: &leaves, priorities: &priorities)
        }
        if !queue.tickets.isEmpty && (queue.tickets.count >= Self.maxWritesPerStatement
                                      || queue.rows + leaves.count + priorities.count > Self.maxRowsPerStatement) {
            guard baseKnown else {
                full = true
                return
            }
            try flush()
        }
        queue.tickets.append(ticket)
        queue.disjoint.add(operation.entries.map(\.path), write: queue.tickets.count)
        queue.entryWrites += entries.map { _ in String(queue.tickets.count) }
        queue.entries += entries
        queue.entryEnds.append(String(queue.entries.count))
        queue.ancestors += ancestors.map(\.string).sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }.map { Optional($0) }
        queue.ancestorEnds.append(String(queue.ancestors.count))
        queue.leaves.append(leaves)
        queue.leafEnds.append(String(queue.leaves.paths.count))
        queue.priorities.append(priorities)
        queue.priorityEnds.append(String(queue.priorities.paths.count))
        queue.changePaths.append(change.path.storageKey)
        queue.changeKinds.append(change.kind.rawValue)
        queue.changeData.append(String(decoding: JSONWriter.write(change.data), as: UTF8.self))
        guard baseKnown else { return }
        connection.beforeNextStatement = { [weak self] () throws(StoreError) in try self?.flush() }
    }

    /// Sends the queued writes (nothing when none are queued). Never before the base is
    /// known: a batch sent whole sends its writes only in its one exchange.
    func flush() throws(StoreError) {
        guard baseKnown else { throw .corrupt("the batch writer was asked to send its writes before its base was known") }
        guard let statement = takeQueued() else { return }
        try received(connection.query(statement.sql, statement.params))
    }

    /// The statement that applies the queued writes, for the caller to send (with others,
    /// in one exchange), and hands the answer to `received`; nil when none are queued. The
    /// writes are no longer queued.
    func takeQueued() -> PGConnection.Statement? {
        connection.beforeNextStatement = nil
        guard !queue.tickets.isEmpty else { return nil }
        let sent = queue
        queue = Queue()
        inFlight = sent.tickets
        let literal = PGArray.literal as ([String?]) -> String
        let parameters: [PGValue] = [.int(Int64(maxReplaced)), baseKnown ? .int(lastSeq) : .null, .int(at),
                                     .text(sent.disjoint.holds ? "true" : "false"), .text(literal(sent.entryWrites)),
                                     .text(literal(sent.entryEnds)), .text(literal(sent.entries)),
                                     .text(literal(sent.ancestorEnds)), .text(literal(sent.ancestors)),
                                     .text(literal(sent.leafEnds))] + sent.leaves.parameters
            + [.text(literal(sent.priorityEnds))] + sent.priorities.parameters
            + [.text(literal(sent.changePaths)), .text(literal(sent.changeKinds)), .text(literal(sent.changeData))]
        statements += 1
        return .init(sql: Self.applySQL, params: parameters)
    }

    /// Takes the answer of the statement `takeQueued` gave: each write's change number, or
    /// none for a write too large (the numbers after it close up).
    func received(_ result: PGResult) throws(StoreError) {
        let tickets = inFlight
        guard baseKnown else { throw .corrupt("the batch writer got its writes' answer before its base") }
        guard result.rowCount == tickets.count else {
            throw .corrupt("hearth_apply_batch answered \(result.rowCount) outcomes for \(tickets.count) writes")
        }
        inFlight = []
        for (row, ticket) in tickets.enumerated() {
            if result.int64(row, 0) < 0 {
                outcomes.append((ticket, nil))
            } else {
                lastSeq += 1
                outcomes.append((ticket, lastSeq))
            }
        }
    }

    /// For writes taken by `takeQueued` whose answer was lost with the COMMIT's, in a batch
    /// that committed with `batchLast` as its last change number: when the batch logged one
    /// number for each of them, each took the next (none was too large). Otherwise (fewer
    /// numbers, or `batchLast` unknown) which of them were applied is unknown: returns
    /// their tickets, with no outcome.
    func resolveInFlight(batchLast: Int64?) -> [Int] {
        let tickets = inFlight
        inFlight = []
        guard !tickets.isEmpty else { return [] }
        guard baseKnown, let batchLast, batchLast - lastSeq == Int64(tickets.count) else { return tickets }
        for ticket in tickets {
            lastSeq += 1
            outcomes.append((ticket, lastSeq))
        }
        return []
    }

    /// The base `$2` is null when not known yet: then the last number the ordering lock found.
    static let applySQL = """
        SELECT unnest(hearth_apply_batch($1, coalesce($2::bigint, (SELECT value FROM hearth_meta WHERE key = 'last_seq')),
            $3, $4::boolean, $5::int[], $6::int[], $7::text[], $8::int[], $9::text[],
            $10::int[], $11::text[], $12::smallint[], $13::bigint[], $14::float8[], $15::text[],
            $16::int[], $17::text[], $18::smallint[], $19::bigint[], $20::float8[], $21::text[],
            $22::text[], $23::text[], $24::text[]))
        """

    /// The outcome of the write sent last, when it is `ticket`'s.
    func outcome(of ticket: Int) -> Outcome? {
        outcomes.last.flatMap { $0.ticket == ticket ? $0 : nil }
    }

    /// Whether the queued writes' entries are unrelated across writes: none is the root,
    /// and none is equal to, above or below an entry of another write. Then no write reads
    /// or replaces what another writes, and `hearth_apply_batch` applies them all at once.
    struct Disjoint {
        private(set) var holds = true
        /// Entry path → the write that has it; ancestor of an entry → the write below it.
        private var entries: [String: Int] = [:], above: [String: Int] = [:]

        mutating func add(_ paths: [DataPath], write: Int) {
            for path in paths where holds {
                let key = path.storageKey
                if path == .root || entries[key].map({ $0 != write }) == true || above[key].map({ $0 != write }) == true {
                    holds = false
                    return
                }
                entries[key] = write
                var ancestor = path
                while let parent = ancestor.parent, holds {
                    ancestor = parent
                    let key = ancestor.storageKey
                    if entries[key].map({ $0 != write }) == true { holds = false }
                    if above[key] == nil { above[key] = write } else if above[key] != write { above[key] = -1 }
                }
            }
        }
    }

    /// A set of leaf rows as the five column arrays of the batch function (rows whose value
    /// is not a leaf are left out, as they have no row).
    struct Columns {
        var paths: [String?] = [], kinds: [String?] = [], ints: [String?] = [], doubles: [String?] = [], strings: [String?] = []

        mutating func append(_ rows: [LeafRow]) {
            for row in rows {
                switch row.value {
                case .string(let s): ints.append(nil); doubles.append(nil); strings.append(s)
                case .int(let i): ints.append(String(i)); doubles.append(nil); strings.append(nil)
                case .double(let d): ints.append(nil); doubles.append(PGArray.doubleText(d)); strings.append(nil)
                case .bool(let b): ints.append(b ? "1" : "0"); doubles.append(nil); strings.append(nil)
                case .null, .array, .object: continue
                }
                paths.append(row.path)
                kinds.append(String(row.kind.rawValue))
            }
        }

        var parameters: [PGValue] { [paths, kinds, ints, doubles, strings].map { .text(PGArray.literal($0)) } }
    }
}

/// PostgreSQL array literals (`{"a","b",NULL}`), so one parameter carries many values.
enum PGArray {
    static func literal(_ items: [String?]) -> String {
        var out = "{"
        for (index, item) in items.enumerated() {
            if index > 0 { out += "," }
            guard let item else {
                out += "NULL"
                continue
            }
            out += "\""
            for scalar in item.unicodeScalars {
                if scalar == "\"" || scalar == "\\" { out += "\\" }
                out.unicodeScalars.append(scalar)
            }
            out += "\""
        }
        return out + "}"
    }

    /// A double as PostgreSQL reads it back exactly (Swift's shortest round-trip form).
    static func doubleText(_ value: Double) -> String {
        "\(value)"
    }

    static func literal(_ items: [String]) -> String {
        literal(items.map { Optional($0) })
    }
}
