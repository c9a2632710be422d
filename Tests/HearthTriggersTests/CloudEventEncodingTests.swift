import HearthHTTPClient
import HearthJSON
import Testing
@testable import HearthTriggers

@Suite struct CloudEventEncodingTests {
    static let origin = EventOrigin(instance: "hearth", databaseHost: "127.0.0.1:9000")

    @Test func binaryContentModeCarriesFirebasesAttributes() throws {
        var trigger = TriggerDefinition(name: "favWritten", kind: .written, ref: try RefPattern("/users/{uid}/favorites/{favId}"),
                                        url: try HTTPURL("http://127.0.0.1:8080/fn"))
        trigger.headers = ["X-Secret": "s3cret"]
        let event = MatchedEvent(trigger: "favWritten", location: try DataPath(string: "/users/u1/favorites/f1"), kind: .written,
                                 change: ValueChange(before: .object(["a": .int(1)]), after: .object(["a": .int(2)])),
                                 auth: EventAuth(type: "app_user", id: "u1"))
        let request = try CloudEventEncoding.request(id: "hearth-7", at: 1_764_178_681_123, payload: event.payload, trigger: trigger, origin: Self.origin)
        func header(_ name: String) -> String? { request.headers.first { $0.name.lowercased() == name }?.value }
        #expect(request.method == "POST" && request.url == trigger.url)
        #expect(header("ce-specversion") == "1.0")
        #expect(header("ce-type") == "google.firebase.database.ref.v1.written")
        #expect(header("ce-source") == "//firebasedatabase.googleapis.com/projects/_/locations/us-central1/instances/hearth")
        #expect(header("ce-subject") == "refs/users/u1/favorites/f1" && header("ce-ref") == "users/u1/favorites/f1")
        #expect(header("ce-id") == "hearth-7" && header("ce-time") == "2025-11-26T17:38:01.123Z")
        #expect(header("ce-instance") == "hearth" && header("ce-location") == "us-central1")
        #expect(header("ce-firebasedatabasehost") == "127.0.0.1:9000")
        #expect(header("ce-authtype") == "app_user" && header("ce-authid") == "u1")
        #expect(header("content-type") == "application/json" && header("x-secret") == "s3cret")
        #expect(header("x-hearth-signature") == nil)
        #expect(try JSONParser.parse(request.body) == .object(["data": .object(["a": .int(1)]), "delta": .object(["a": .int(2)])]))
        // An admin's event has no authid.
        var admin = event
        admin.auth = EventAuth(type: "admin", id: nil)
        let adminRequest = try CloudEventEncoding.request(id: "x", at: 0, payload: admin.payload, trigger: trigger, origin: Self.origin)
        #expect(!adminRequest.headers.contains { $0.name == "ce-authid" })
        #expect(adminRequest.headers.first { $0.name == "ce-time" }?.value == "1970-01-01T00:00:00.000Z")
    }

    /// RFC 4231 test case 2, and the header a receiver checks.
    @Test func theBodyIsSignedWithHMACSHA256() throws {
        let mac = CloudEventEncoding.hmacSHA256(key: Array("Jefe".utf8), Array("what do ya want for nothing?".utf8))
        #expect(CloudEventEncoding.hex(mac) == "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843")
        var trigger = TriggerDefinition(name: "t", kind: .written, ref: try RefPattern("/a"), url: try HTTPURL("http://h/"))
        trigger.hmacSecret = "0123456789abcdef"
        let event = MatchedEvent(trigger: "t", location: try DataPath(string: "/a"), kind: .written,
                                 change: ValueChange(before: .null, after: .int(1)), auth: EventAuth(type: "admin", id: nil))
        let request = try CloudEventEncoding.request(id: "1", at: 0, payload: event.payload, trigger: trigger, origin: Self.origin)
        let expected = "sha256=" + CloudEventEncoding.hex(CloudEventEncoding.hmacSHA256(key: Array("0123456789abcdef".utf8), request.body))
        #expect(request.headers.first { $0.name == CloudEventEncoding.signatureHeader }?.value == expected)
    }

    @Test func aPayloadThisModuleDidNotWriteIsUndeliverable() throws {
        let trigger = TriggerDefinition(name: "t", kind: .written, ref: try RefPattern("/a"), url: try HTTPURL("http://h/"))
        #expect(throws: UndeliverableEvent.self) {
            try CloudEventEncoding.request(id: "1", at: 0, payload: Array("[1]".utf8), trigger: trigger, origin: Self.origin)
        }
    }
}
