import Foundation
import HearthHTTP
import HearthJSON
import HearthRules
import Synchronization

/// `/.settings/rules.json` for admins (Firebase's REST rules management): read the rules
/// file (`format=strict` for plain JSON), or replace it (`dryRun=true` only checks it).
/// A replacement is compiled first, written to the rules file atomically (so a restart
/// keeps it), then handed to the database (`DatabaseInstance.replaceRules`: swapped in
/// atomically, recorded in the history with its author, open streams that lose read
/// access get `cancel`).
final class RulesSettings: Sendable {
    let path: String
    /// Read instead of `path` while `path` does not exist (nil: never): the server's rules
    /// file, for an emulator-made namespace whose rules were not replaced yet.
    let fallbackPath: String?
    let policy: RulesAccessPolicy
    let history: RulesHistory
    /// Swaps, records and reviews (`DatabaseInstance.replaceRules`).
    private let replace: @Sendable (RuleSet, String, RulesHistory.Author) -> Void
    private let replaced: @Sendable () -> Void
    /// Replacements one at a time, so the file and the running rules never disagree.
    private let writing = Mutex(())

    /// The rules file at `path` of `instance`; `fallbackPath`: read while `path` does not
    /// exist; `replaced`: told after each replacement through `put` (the log line).
    init(path: String, fallbackPath: String? = nil, instance: DatabaseInstance, replaced: @escaping @Sendable () -> Void = {}) {
        (self.path, self.fallbackPath, self.policy, self.history, self.replaced) = (path, fallbackPath, instance.policy, instance.history, replaced)
        replace = { rules, text, author in instance.replaceRules(rules, text: text, by: author) }
    }

    /// Over a bare policy and history, with no listens to review (an in-process router).
    init(path: String, policy: RulesAccessPolicy, history: RulesHistory, replaced: @escaping @Sendable () -> Void) {
        (self.path, self.fallbackPath, self.policy, self.history, self.replaced) = (path, nil, policy, history, replaced)
        replace = { rules, text, author in
            policy.replace(rules)
            history.record(text, by: author)
        }
    }

    /// The file the running rules come from: `path`, or `fallbackPath` while `path` does not exist.
    private var readPath: String {
        guard let fallbackPath, !FileManager.default.fileExists(atPath: path) else { return path }
        return fallbackPath
    }

    func get(strict: Bool) -> HTTPResponse {
        let text: String
        do {
            text = try writing.withLock { _ in try RulesLoader.readText(readPath) }
        } catch {
            return APIError(503, "The rules file cannot be read").response
        }
        if strict {
            guard let json = try? RuleSet.strictJSON(text) else { return APIError(503, "The rules file is not valid").response }
            return JSONResponse.make(json, options: .defaults, render: false)
        }
        var headers = JSONResponse.corsHeaders()
        headers.add("Content-Type", JSONResponse.contentType)
        return HTTPResponse(status: 200, headers: headers, body: Array(text.utf8))
    }

    func put(_ body: [UInt8], dryRun: Bool, by author: RulesHistory.Author) -> HTTPResponse {
        let compiled = Self.compile(body)
        guard case .success(let (rules, text)) = compiled else {
            if case .failure(let refusal) = compiled { return refusal.response }
            return APIError.internalError.response
        }
        if dryRun { return JSONResponse.make(.object(["status": "ok"]), options: .defaults, render: false) }
        do {
            try writing.withLock { _ in
                try Data(body).write(to: URL(fileURLWithPath: path), options: .atomic)
                // Under the lock: the history's order is the order the rules ran in.
                replace(rules, text, author)
            }
        } catch {
            return APIError(503, "The rules file cannot be written; the rules were not changed").response
        }
        replaced()
        return JSONResponse.make(.object(["status": "ok"]), options: .defaults, render: false)
    }

    /// The refusal `body` gets as rules (413, or 400 with the compile errors), nil when they compile.
    static func check(_ body: [UInt8]) -> HTTPResponse? {
        if case .failure(let refusal) = compile(body) { return refusal.response }
        return nil
    }

    private static func compile(_ body: [UInt8]) -> Result<(RuleSet, String), APIError> {
        guard body.count <= RulesLoader.maxRulesFileBytes else {
            return .failure(APIError(413, "Rules larger than \(RulesLoader.maxRulesFileBytes) bytes"))
        }
        guard let text = String(validating: body, as: UTF8.self) else {
            return .failure(.badRequest("Rules must be UTF-8 text"))
        }
        do {
            return .success((try RuleSet.compile(text), text))
        } catch {
            let lines = error.diagnostics.map { "Line \($0.line): \($0.rulePath): \($0.message)" }
            return .failure(.badRequest(lines.joined(separator: "\n")))
        }
    }

    /// Re-reads the rules file and swaps it in (`SIGHUP`), recorded in the history, under
    /// the lock a replacement takes: the file, the running rules and the history's order
    /// agree. An invalid or unreadable file changes nothing.
    func reload() throws(RulesLoader.LoadError) {
        try writing.withLock { _ throws(RulesLoader.LoadError) in
            let loaded = try RulesLoader.loadWithText(readPath)
            replace(loaded.rules, loaded.text, .fileReloaded)
        }
    }
}
