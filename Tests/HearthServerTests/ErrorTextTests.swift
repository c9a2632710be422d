import HearthHTTP
import HearthJSON
import HearthStore
import Testing
@testable import HearthServer

/// The exact `{"error": …}` texts a REST client gets for bad paths and keys:
/// each prefix once (`PathError`'s text already starts "Invalid path: "), sentence case.
@Suite struct ErrorTextTests {
    let h: RouterHarness
    init() throws { h = try RouterHarness() }

    static let forbiddenDot = #"key "a.b" contains .; keys must not contain . $ # [ ] / or control characters"#

    @Test(arguments: [
        ("GET", "/a.b.json", nil, "Invalid path: " + forbiddenDot),
        ("PUT", "/x/a.b.json", "1", "Invalid path: " + forbiddenDot),
        ("POST", "/a.b.json", "1", "Invalid path: " + forbiddenDot),
        ("GET", "/bad%zz.json", nil, #"Invalid path: segment "bad%zz" is not valid percent-encoded UTF-8"#),
        ("PATCH", "/.json", #"{"x/a.b":1}"#, "Invalid path: " + forbiddenDot),
        ("PATCH", "/.json", #"{"//":1}"#, #"Invalid path: update key "//" names no child"#),
        ("PUT", "/x.json", #"{"a.b":1}"#, "Invalid data at /x: " + forbiddenDot),
    ] as [(String, String, String?, String)])
    func pathAndKeyErrors(method: String, target: String, body: String?, text: String) async {
        let response = await h.send(method, target, body)
        #expect(response.status == 400)
        #expect(response.errorMessage == text)
    }

    @Test func tooDeepSaysItOnce() async {
        let path = "/" + (1...DataPath.maxDepth).map { "d\($0)" }.joined(separator: "/") + ".json"
        let response = await h.send("GET", path)
        #expect(response.status == 400)
        #expect(response.errorMessage == "Invalid path: the path is \(DataPath.maxDepth) levels deep; paths must be fewer than \(DataPath.maxDepth) levels deep")
    }

    /// A store that cannot take requests: a read says it was not served, a write that
    /// nothing was written, `/readyz` why; each 503 has `Retry-After`. A write whose outcome
    /// is unknown says so (the HTTP adapter's mapping, from the core's error).
    @Test func storeOutageAnswersSayWhatHappened() async throws {
        #expect(await h.send("PUT", "/a.json", "1").status == 200)
        h.store.close()
        let retryAfter = String(APIError.storeRetryAfterSeconds)
        for (method, body, expected) in [("GET", nil, APIError.readUnavailable), ("PUT", "2", .writeNotWritten), ("POST", "3", .writeNotWritten)] as [(String, String?, APIError)] {
            let response = await h.send(method, "/b.json", body)
            #expect(response.status == 503, "\(method)")
            #expect(response.errorMessage == expected.message, "\(method)")
            #expect(response.headers["Retry-After"] == retryAfter, "\(method)")
        }
        let ready = await h.send("GET", "/readyz")
        #expect(ready.status == 503)
        #expect(ready.errorMessage == "Not ready: the data store is closed (the server is stopping)")
        #expect(ready.headers["Retry-After"] == retryAfter)
        let unknown = h.router.context.response(for: .outcomeUnknown(cause: "x"), during: .write)
        #expect(unknown == .writeOutcomeUnknown)
        #expect(unknown.response.headers["Retry-After"] == retryAfter)
        #expect(Set([APIError.readUnavailable, .writeNotWritten, .writeOutcomeUnknown, .unavailable].map(\.message)).count == 4)
    }

    /// `/readyz`'s reason for each kind of store failure (docs/api.md, docs/scaling.md).
    @Test func readinessSaysWhyFromTheStoresFailure() {
        let down = StoreError.engine(EngineFailure(engine: "postgres", code: "connection", kind: .unavailable, message: "refused", operation: "connect"))
        let locked = StoreError.engine(EngineFailure(engine: "sqlite", code: "5", kind: .busy, message: "locked", operation: "step"))
        #expect(HealthEndpoint.notReady(WriteFailure.store(down)).message == "Not ready: the database cannot be reached; reads and writes fail until it answers")
        #expect(HealthEndpoint.notReady(WriteFailure.outcomeUnknown(down)).message == "Not ready: the database cannot be reached; reads and writes fail until it answers")
        #expect(HealthEndpoint.notReady(down).message == "Not ready: the database cannot be reached; reads and writes fail until it answers")
        #expect(HealthEndpoint.notReady(locked).message == "Not ready: the database is locked by another process; writes wait until it is released")
        #expect(HealthEndpoint.notReady(StoreError.corrupt("x")).message == "Not ready: the data store does not take writes")
        #expect(HealthEndpoint.notReady(StoreError.closed).status == 503)
    }

    /// Fixed texts start with a capital letter (texts that start with a parameter or header
    /// name, such as `orderBy must be …`, keep its spelling, as Firebase's do).
    @Test func fixedTextsAreSentences() {
        for error in [APIError.invalidData, .permissionDenied, .internalError, .unavailable, .readUnavailable, .writeNotWritten, .writeOutcomeUnknown, .methodNotAllowed("X")] {
            #expect(error.message.first?.isUppercase == true, "\(error.message)")
        }
    }
}
