import ArgumentParser
import HearthStore
import HearthTriggers

/// `hearth triggers …`: the declared triggers' backlog with each one's
/// oldest pending event, their dead letters, parking pending events and resending dead
/// letters, in one namespace's outbox (`--ns`; default: the default
/// namespace's). Works while `hearth serve` runs (on SQLite and PostgreSQL): the running
/// server's deliverers see resent events within `TriggerLimits.idlePollMilliseconds`.
struct Triggers: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "List the database triggers with their backlog and oldest pending event, list dead letters, park pending events, resend dead letters.",
        discussion: "Each namespace keeps its own outbox: --ns <name> works on that namespace's (which must exist: the server makes it), without --ns on the default namespace's.",
        subcommands: [List.self, Dead.self, Park.self, Resend.self, Import.self])

    /// `writes`: the command changes the outbox, so it holds the data directory's lock as
    /// account writers do (refused while an import or a restore runs; the lock is the
    /// server's data directory's, whichever namespace is named). A namespace that does not
    /// exist is refused before anything is opened, so none is created.
    static func withOutbox(_ data: DataDirectoryOption, writes: Bool, _ body: (any TriggerOutbox) throws -> Void) throws {
        try Tool.run {
            try data.requireNamespace()
            let lock = writes ? try data.lock(.writesAccounts) : nil
            defer { lock?.release() }
            let store = try data.openEngine()
            defer { store.close() }
            try body(store.triggerOutbox)
        }
    }

    /// A time as the CLI prints it: ISO 8601 in UTC, to the millisecond.
    static func time(_ milliseconds: Int64) -> String { CloudEventEncoding.rfc3339(milliseconds: milliseconds) }

    /// A single line (tab-separated output): tabs and newlines of messages become spaces.
    static func cell(_ text: String?) -> String {
        guard let text, !text.isEmpty else { return "-" }
        return String(text.map { $0 == "\t" || $0 == "\n" || $0 == "\r" ? " " : $0 })
    }

    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Print each trigger: name, event, ref, url, pending events, age of the oldest pending (s), dead letters, stored bytes/budget, last error, then its oldest pending event: id, ref, attempts, last error (tab-separated).",
            discussion: "The oldest pending event is the next in line: when it keeps failing, later events wait behind it ('hearth triggers park ID' sets it aside). Its attempts count those the function answered (not 2xx) or that timed out; a refused connection is not counted (its last error says so). The triggers are those of --triggers (or HEARTH_TRIGGERS; with --ns only those whose instance pattern takes that namespace), then any other name with pending events or dead letters (event, ref and url '-'). Stored bytes are the payload bytes of the pending events and dead letters together, and the budget is the trigger's maxStoredBytes (default \(TriggerLimits.defaultMaxStoredBytes); '-' for a name no longer declared). Header values and HMAC secrets are never printed.")
        @OptionGroup var data: DataDirectoryOption
        @Option(help: "The triggers file (default HEARTH_TRIGGERS; none: only names with a backlog).") var triggers: String?
        func run() throws {
            let path = triggers ?? Environment()["HEARTH_TRIGGERS"]
            var declared: [TriggerDefinition]
            do {
                declared = try path.map { path throws(TriggerConfigError) in try TriggerConfig.load(path: path) } ?? []
            } catch {
                throw Tool.fail(error.description)
            }
            // A namespace's database is the instance of that name: the triggers that fire there.
            if let namespace = data.namespace { declared = TriggerMatcher(triggers: declared, instance: namespace).triggers }
            try Triggers.withOutbox(data, writes: false) { outbox in
                let now = WallClock.milliseconds()
                for row in try TriggerOverview.all(declared: declared, outbox: outbox) {
                    let age = row.oldestPendingAt.map { String(max(0, now - $0) / 1000) }
                    print([row.name, Triggers.cell(row.event), Triggers.cell(row.ref), Triggers.cell(row.url), String(row.pending),
                           Triggers.cell(age), row.dead >= TriggerLimits.maxDeadLettersCounted ? "\(row.dead)+" : String(row.dead),
                           "\(row.storedBytes)/\(row.maxStoredBytes.map(String.init) ?? "-")", Triggers.cell(row.lastError),
                           Triggers.cell(row.oldestPending.map { String($0.id) }), Triggers.cell(row.oldestPending?.ref),
                           Triggers.cell(row.oldestPending.map { String($0.attempts) }), Triggers.cell(row.oldestPending?.lastError)]
                        .joined(separator: "\t"))
                }
            }
        }
    }

    struct Dead: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Print dead letters, oldest first: id, trigger, ref, reason, attempts, last error, died at (tab-separated).")
        @OptionGroup var data: DataDirectoryOption
        @Option(help: "Only this trigger's.") var trigger: String?
        @Option(help: "At most this many.") var limit = 100
        func validate() throws {
            guard limit > 0 else { throw ValidationError("--limit must be at least 1") }
        }
        func run() throws {
            try Triggers.withOutbox(data, writes: false) { outbox in
                for letter in try outbox.deadLetters(trigger: trigger, limit: limit) {
                    print([String(letter.record.id), letter.record.trigger, Triggers.cell(letter.ref), Triggers.cell(letter.reason),
                           String(letter.record.attempts), Triggers.cell(letter.record.lastError), Triggers.time(letter.diedAt)]
                        .joined(separator: "\t"))
                }
            }
        }
    }

    struct Park: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Move pending events to the dead letters: no more attempts, and the events behind them go on. 'resend' brings them back (same id).",
            discussion: "Give their ids (a trigger's oldest pending event is in 'hearth triggers list'). Prints how many moved; an id that is not a pending event is reported and the command fails, the others still moved. A running server sees it within \(TriggerLimits.idlePollMilliseconds) ms and attempts it no more (an attempt already under way finishes: at least once). The dead letter's reason is '\(TriggerLimits.parkedReason)'.")
        @OptionGroup var data: DataDirectoryOption
        @Argument(help: "Pending events' ids.") var ids: [Int64] = []
        func validate() throws {
            if ids.isEmpty { throw ValidationError("give the pending events' ids") }
        }
        func run() throws {
            try Triggers.withOutbox(data, writes: true) { outbox in
                let unique = Array(Set(ids)).sorted()
                let moved = try outbox.park(ids: unique, reason: TriggerLimits.parkedReason, at: WallClock.milliseconds())
                print("parked \(moved.count) event(s)")
                let movedSet = Set(moved)
                let missing = unique.filter { !movedSet.contains($0) }
                if !missing.isEmpty {
                    throw Tool.fail("\(missing.count) of the ids given are not pending events: \(missing.map(String.init).joined(separator: " "))")
                }
            }
        }
    }

    struct Resend: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Move dead letters back to pending: the running server delivers them again, in their original order.",
            discussion: "Give their ids (from 'hearth triggers dead'), or --all (with --trigger: that trigger's only). Prints how many moved; an id that is not a dead letter is reported and the command fails.")
        @OptionGroup var data: DataDirectoryOption
        @Argument(help: "Dead letters' ids.") var ids: [Int64] = []
        @Flag(help: "Every dead letter (of --trigger, when given).") var all = false
        @Option(help: "With --all: only this trigger's.") var trigger: String?
        func validate() throws {
            if all && !ids.isEmpty { throw ValidationError("give ids or --all, not both") }
            if !all && ids.isEmpty { throw ValidationError("give the dead letters' ids, or --all") }
            if trigger != nil && !all { throw ValidationError("--trigger goes with --all") }
        }
        func run() throws {
            try Triggers.withOutbox(data, writes: true) { outbox in
                if all {
                    print("resent \(try TriggerOverview.resendAll(trigger: trigger, outbox: outbox)) dead letter(s)")
                    return
                }
                let unique = Array(Set(ids)).sorted()
                let moved = try outbox.resend(ids: unique)
                print("resent \(moved) dead letter(s)")
                if moved < unique.count { throw Tool.fail("\(unique.count - moved) of the ids given are not dead letters") }
            }
        }
    }
}
