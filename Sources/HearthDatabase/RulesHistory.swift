import HearthStore
import Logging

/// The versions the rules went through, each with who or what changed them:
/// kept with the console's records, shown on the console's Rules screen. Every way the
/// running rules change records here: the console (its administrator's email),
/// `PUT /.settings/rules.json` (an admin token), a `SIGHUP` reload and a file changed
/// while Hearth was stopped (found at startup).
public struct RulesHistory: Sendable {
    /// Versions kept.
    public static let kept = 20

    /// Who or what changed the rules, as the history shows it.
    public enum Author: Sendable, Equatable, CustomStringConvertible {
        /// A console administrator, by email.
        case console(String)
        /// `PUT /.settings/rules.json` with an admin credential.
        case adminToken
        /// The file, re-read on `SIGHUP`.
        case fileReloaded
        /// The file as Hearth found it when it started.
        case fileAtStartup

        public var description: String {
            switch self {
            case .console(let email): return email
            case .adminToken: return "admin token (PUT /.settings/rules.json)"
            case .fileReloaded: return "rules file (reloaded on SIGHUP)"
            case .fileAtStartup: return "rules file (read at startup)"
            }
        }
    }

    public let records: any ConsoleRecords
    /// Milliseconds since the epoch.
    public let clock: @Sendable () -> Int64
    public let logger: Logger

    public init(records: any ConsoleRecords, clock: @escaping @Sendable () -> Int64, logger: Logger) {
        (self.records, self.clock, self.logger) = (records, clock, logger)
    }

    /// Records `text` as the newest version unless it is the newest already (a reload or a
    /// save that changed nothing). The rules already run: a failure is logged, not thrown.
    public func record(_ text: String, by author: Author) {
        do {
            if try records.rulesHistory().first?.text == text { return }
            try records.recordRules(text, by: author.description, at: clock(), keep: Self.kept)
        } catch {
            logger.error("the rules changed (by \(author)) but the change could not be recorded in their history: \(error)")
        }
    }

    /// The recorded versions, newest first.
    public func versions() throws -> [ConsoleStore.RulesVersion] {
        try records.rulesHistory()
    }
}
