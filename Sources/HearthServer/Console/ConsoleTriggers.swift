import HearthAccounts
import HearthHTTP
import HearthJSON
import HearthTriggers

/// The console's Triggers screen: each trigger's event, ref, url (no
/// header values, no HMAC secret, no query), lag (pending events, the oldest's commit
/// time), last error; its dead letters, and resending them. Blocking work (the outbox):
/// called on the auth work queue (`ConsoleRoute.api`); the resend passed its CSRF check.
///
/// Each namespace's triggers are its own (its outbox, `ns`; `ConsoleNamespaces`).
///
/// - `GET /console/api/triggers[?trigger=NAME]` → `{"configured", "triggers": [...], "dead": [...], "now"}`
/// - `POST /console/api/triggers/resend` `{"ids": [...]}` → `{"resent": n}`
/// - `POST /console/api/triggers/park` `{"ids": [...]}` → `{"parked": n, "notPending": [...]}`: pending
///   events to the dead letters (`TriggerOutbox.park`); ids not pending are named, the others move.
extension ConsoleRoute {
    /// Dead letters the screen lists (the oldest first).
    static let deadLettersShown = 200
    /// Ids one resend or one park may name.
    static let maxResendIDs = 1000

    func triggers(_ request: HTTPRequest, _ endpoint: String, respond: @escaping @Sendable (HTTPResponse) -> Void) {
        guard let delivery = context.triggers else {
            guard endpoint == "triggers", request.method == "GET" else { return respond(Self.error(404, "no triggers file is set (--triggers)")) }
            return respond(Self.json(["configured": false, "triggers": [], "dead": []]))
        }
        let outbox = delivery.outbox
        do {
            switch (endpoint, request.method) {
            case ("triggers", "GET"):
                var trigger: String? = nil
                do throws(AuthError) {
                    trigger = try AdminAccountsRoute.queryParameters(request.query)["trigger"]
                } catch {
                    return respond(Self.error(400, "a malformed query"))
                }
                let rows = try TriggerOverview.all(declared: delivery.definitions, outbox: outbox,
                                                   statuses: delivery.status().map(\.status), defaultBudget: delivery.defaultBudget)
                let dead = try outbox.deadLetters(trigger: trigger, limit: Self.deadLettersShown)
                respond(Self.json(["configured": true, "triggers": .array(rows.map(\.json)), "dead": .array(dead.map(\.json)),
                                   "now": .int(delivery.now())]))
            case ("triggers/resend", "POST"):
                let ids: [Int64]
                switch Self.ids(request, of: "dead letter") {
                case .success(let given): ids = given
                case .failure(let refusal): return respond(refusal.response)
                }
                let resent = try outbox.resend(ids: ids)
                delivery.resent()  // the deliverers look at their outbox now
                context.logger.info("console: \(resent) dead letter(s) resent\(namespace.isEmpty ? "" : " in namespace " + namespace)")
                respond(Self.json(["resent": .int(Int64(resent))]))
            case ("triggers/park", "POST"):
                let ids: [Int64]
                switch Self.ids(request, of: "pending event") {
                case .success(let given): ids = given
                case .failure(let refusal): return respond(refusal.response)
                }
                let parked = Set(try outbox.park(ids: ids, reason: TriggerLimits.parkedReason, at: delivery.now()))
                delivery.resent()  // the deliverers read their outbox again: the parked events are no longer there
                context.logger.info("console: \(parked.count) pending event(s) parked\(namespace.isEmpty ? "" : " in namespace " + namespace)")
                respond(Self.json(["parked": .int(Int64(parked.count)),
                                   "notPending": .array(ids.filter { !parked.contains($0) }.map { .int($0) })]))
            default:
                respond(Self.error(404, "no such console API"))
            }
        } catch {
            respond(Self.error(503, "the triggers' outbox cannot be read: \(error)"))
        }
    }

    /// A refused body: the answer to send.
    struct IDsRefusal: Error { let response: HTTPResponse }

    /// The body `{"ids": [...]}` of a resend or a park: distinct ids, ascending, 1 to
    /// `maxResendIDs` of them.
    static func ids(_ request: HTTPRequest, of what: String) -> Result<[Int64], IDsRefusal> {
        guard case .object(let body)? = try? JSONParser.parse(request.body), case .array(let items)? = body["ids"] else {
            return .failure(IDsRefusal(response: error(400, "send {\"ids\": [\(what) ids]}")))
        }
        let ids = items.compactMap { item -> Int64? in if case .int(let id) = item { return id } else { return nil } }
        guard ids.count == items.count, !ids.isEmpty else {
            return .failure(IDsRefusal(response: error(400, "\"ids\" must be a non-empty array of integers")))
        }
        guard ids.count <= maxResendIDs else { return .failure(IDsRefusal(response: error(413, "at most \(maxResendIDs) ids at once"))) }
        return .success(Array(Set(ids)).sorted())
    }
}
