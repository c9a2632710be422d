import HearthDatabase
import HearthHTTP
import HearthHTTPClient
import HearthJSON
import HearthStore
import HearthTriggers
import Logging
import Testing
@testable import HearthServer

/// The console's Triggers API at the router: the triggers with their
/// lag and no secrets, the dead letters, a resend (CSRF checked, bad bodies refused), and
/// a clear answer without a triggers file.
@Suite struct ConsoleTriggersTests {
    let h: RouterHarness
    let cookie: String
    let csrf: String

    init() async throws {
        h = try RouterHarness(console: true)
        (cookie, csrf) = try await h.consoleSession()
    }

    func call(_ router: Router, _ method: String, _ endpoint: String, _ body: String? = nil, csrf: Bool = true) async -> HTTPResponse {
        var headers = [("Cookie", cookie), ("Content-Type", "application/json")]
        if csrf { headers.append(("X-CSRF-Token", self.csrf)) }
        let request = HTTPRequest(method: method, target: "/console/api/" + endpoint,
                                  headers: HTTPHeaders(headers.map { (name: $0.0, value: $0.1) }), body: body.map { Array($0.utf8) } ?? [])
        return await withCheckedContinuation { continuation in
            router.handle(request, responder: HTTPResponder { continuation.resume(returning: $0) })
        }
    }

    @Test func withoutATriggersFile() async throws {
        let answer = await call(h.router, "GET", "triggers")
        #expect(answer.status == 200 && answer.json == .object(["configured": false, "triggers": [], "dead": []]))
        #expect(await call(h.router, "POST", "triggers/resend", #"{"ids": [1]}"#).status == 404)
    }

    @Test func listDeadLettersAndResend() async throws {
        var trigger = TriggerDefinition(name: "fav", kind: .written, ref: try RefPattern("/items/{id}"),
                                        url: try HTTPURL("http://127.0.0.1:9/hook?key=query-secret"), retry: true)
        trigger.headers = ["Authorization": "Bearer header-secret"]
        trigger.hmacSecret = "hmac-secret-0123456789"
        // Not started: nothing is delivered, so the outbox holds what the test puts there.
        let delivery = TriggerDelivery(outbox: h.store.triggerOutbox, origin: EventOrigin(instance: "hearth", databaseHost: "127.0.0.1:9"),
                                       logger: Logger(label: "test"), clock: WallClock.milliseconds)
        delivery.replace([trigger])
        var context = h.router.context
        context.triggers = delivery
        let router = Router(context: context)
        let outbox = h.store.triggerOutbox
        for id in ["a", "b"] {
            try h.store.writeSync(.set(WriteEntry(path: try DataPath(string: "/items/\(id)"), value: .int(1))), check: nil,
                                  effects: delivery.effects(for: Caller(auth: .null, isAdmin: true)))
        }
        let first = try #require(outbox.pending(trigger: "fav", now: .max, limit: 1).first)
        try outbox.kill(id: first.id, reason: "not retried (retry: false): HTTP 500", at: 1_000)

        let answer = await call(router, "GET", "triggers")
        #expect(answer.status == 200)
        for secret in ["header-secret", "hmac-secret", "query-secret"] { #expect(!answer.text.contains(secret)) }
        let body = try #require(answer.json?.objectValue)
        let row = try #require(body["triggers"]?.arrayValue?.first?.objectValue)
        #expect(row["name"] == "fav" && row["ref"] == "/items/{id}" && row["url"] == "http://127.0.0.1:9/hook" && row["pending"] == 1 && row["dead"] == 1)
        if case .int? = row["oldestPendingAt"] {} else { Issue.record("no oldestPendingAt: \(row)") }
        let dead = try #require(body["dead"]?.arrayValue?.first?.objectValue)
        #expect(dead["id"] == .int(first.id) && dead["ref"] == "/items/a" && dead["reason"] == "not retried (retry: false): HTTP 500" && dead["diedAt"] == 1000)

        #expect(await call(router, "POST", "triggers/resend", #"{"ids": [\#(first.id)]}"#, csrf: false).status == 403)
        #expect(await call(router, "POST", "triggers/resend", "nope").status == 400)
        #expect(await call(router, "POST", "triggers/resend", #"{"ids": ["1"]}"#).status == 400)
        #expect(await call(router, "POST", "triggers/resend", #"{"ids": []}"#).status == 400)
        let tooMany = "{\"ids\": [" + (0...ConsoleRoute.maxResendIDs).map(String.init).joined(separator: ",") + "]}"
        #expect(await call(router, "POST", "triggers/resend", tooMany).status == 413)
        #expect(try outbox.deadLetters(trigger: nil, limit: 10).count == 1)
        let resent = await call(router, "POST", "triggers/resend", #"{"ids": [\#(first.id)]}"#)
        #expect(resent.status == 200 && resent.json == .object(["resent": 1]))
        #expect(try outbox.deadLetters(trigger: nil, limit: 10).isEmpty && outbox.pendingCount(trigger: "fav") == 2)
        #expect(await call(router, "GET", "triggers?trigger=other").json?.objectValue?["dead"] == .array([]))
    }
}

extension ConsoleTriggersTests {
    /// The screen lists at most `deadLettersShown` dead letters, the oldest first.
    @Test func atMostDeadLettersShown() async throws {
        let delivery = TriggerDelivery(outbox: h.store.triggerOutbox, origin: EventOrigin(instance: "hearth", databaseHost: "127.0.0.1:9"),
                                       logger: Logger(label: "test"), clock: WallClock.milliseconds)
        var context = h.router.context
        context.triggers = delivery
        let count = ConsoleRoute.deadLettersShown + 1
        let payload = JSONWriter.write(.object(["ref": .string("items/x"), "type": .string("t"), "authtype": .string("admin")]))
        try h.store.writeSync(.set(WriteEntry(path: try DataPath(string: "/items"), value: .int(1))), check: nil,
                              effects: { _, _ in (0..<count).map { _ in OutboxEvent(trigger: "gone", payload: payload) } })
        let records = try h.store.triggerOutbox.pending(trigger: "gone", now: .max, limit: count)
        for record in records { try h.store.triggerOutbox.kill(id: record.id, reason: "test", at: 1) }
        let body = try #require(await call(Router(context: context), "GET", "triggers").json?.objectValue)
        let dead = try #require(body["dead"]?.arrayValue)
        #expect(dead.count == ConsoleRoute.deadLettersShown && dead.first?.objectValue?["id"] == .int(records[0].id))
        // A name no longer declared still shows, with its count and stored bytes (no budget applies).
        let stored = try #require(try h.store.triggerOutbox.storedBytes(trigger: "gone")["gone"])
        #expect(stored.pending == 0 && stored.dead > 0)
        #expect(body["triggers"] == .array([.object(["name": "gone", "pending": 0, "dead": .int(Int64(count)), "declared": false,
                                                     "storedBytes": .int(stored.total)])]))
    }
}
