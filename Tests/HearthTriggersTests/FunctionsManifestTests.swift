import HearthJSON
import Testing
@testable import HearthTriggers

@Suite struct FunctionsManifestTests {
    static func database(_ type: String, ref: String = "items/{id}", instance: String? = "*", exact: Bool = false,
                         retry: JSONValue = .bool(false), timeout: JSONValue = .null) -> JSONValue {
        var patterns: [JSONKey: JSONValue] = ["ref": .string(ref)]
        var filters: [JSONKey: JSONValue] = [:]
        if let instance { if exact { filters["instance"] = .string(instance) } else { patterns["instance"] = .string(instance) } }
        return .object(["entryPoint": .string("f"), "platform": .string("gcfv2"), "timeoutSeconds": timeout,
                        "eventTrigger": .object(["eventType": .string(type), "retry": retry,
                                                 "eventFilterPathPatterns": .object(patterns), "eventFilters": .object(filters)])])
    }

    static func manifest(_ endpoints: [String: JSONValue]) -> JSONValue {
        .object(["endpoints": .object(Dictionary(uniqueKeysWithValues: endpoints.map { (JSONKey($0.key), $0.value) })),
                 "specVersion": .string("v1alpha1")])
    }

    static func run(_ endpoints: [String: JSONValue], urls: [String: String]) throws(FunctionsManifest.ImportError) -> FunctionsManifest.Imported {
        try FunctionsManifest.importTriggers(manifest: manifest(endpoints), urls: urls)
    }

    static func failure(_ endpoints: [String: JSONValue], urls: [String: String]) -> String? {
        do {
            let imported = try run(endpoints, urls: urls)
            Issue.record("imported: \(imported.fileText)")
            return nil
        } catch {
            return error.reason
        }
    }

    @Test func mapsEveryDatabaseEventTypeAndItsOptions() throws {
        let imported = try Self.run([
            "w": Self.database("google.firebase.database.ref.v1.written", ref: "/messages/{id}"),
            "c": Self.database("google.firebase.database.ref.v1.created", ref: "a/{x}/b", instance: "other-db", exact: true),
            "u": Self.database("google.firebase.database.ref.v1.updated", instance: "{db}", retry: .bool(true), timeout: .int(120)),
            "d": Self.database("google.firebase.database.ref.v1.deleted", instance: nil),
        ], urls: ["w": "http://127.0.0.1:1/", "c": "http://127.0.0.1:2/", "u": "http://127.0.0.1:3/", "d": "https://fn.example/d"])
        #expect(imported.skipped.isEmpty)
        #expect(imported.fileText == """
            {"triggers": [
              {"name": "c", "event": "created", "ref": "/a/{x}/b", "instance": "other-db", "url": "http://127.0.0.1:2/", "retry": false},
              {"name": "d", "event": "deleted", "ref": "/items/{id}", "url": "https://fn.example/d", "retry": false},
              {"name": "u", "event": "updated", "ref": "/items/{id}", "instance": "{db}", "url": "http://127.0.0.1:3/", "retry": true, "timeoutSeconds": 120},
              {"name": "w", "event": "written", "ref": "/messages/{id}", "url": "http://127.0.0.1:1/", "retry": false}
            ]}

            """)
        // What it prints is a triggers file Hearth loads, with the same meaning.
        let loaded = try TriggerConfig.parse(Array(imported.fileText.utf8), path: "t.json")
        #expect(loaded.map(\.kind) == [.created, .deleted, .updated, .written])
        #expect(loaded.map { $0.instance == nil } == [false, true, false, true])
        #expect(loaded.map(\.retry) == [false, false, true, false])
        #expect(loaded.map(\.timeoutSeconds) == [TriggerLimits.defaultTimeoutSeconds, TriggerLimits.defaultTimeoutSeconds, 120, TriggerLimits.defaultTimeoutSeconds])
    }

    @Test func mapsScheduledFunctions() throws {
        let imported = try Self.run([
            "tick": .object(["scheduleTrigger": .object(["schedule": .string("every 5 minutes"), "timeZone": .string("Europe/Paris"),
                                                           "retryConfig": .object(["retryCount": .int(3)])])]),
            "tock": .object(["scheduleTrigger": .object(["schedule": .string("*/2 * * * *"), "retryConfig": emptyObject])]),
            "zero": .object(["scheduleTrigger": .object(["schedule": .string("0 9 * * 1"), "timeZone": .null,
                                                           "retryConfig": .object(["retryCount": .int(0)])])]),
        ], urls: ["tick": "http://127.0.0.1:4/", "tock": "http://127.0.0.1:5/", "zero": "http://127.0.0.1:6/"])
        #expect(imported.fileText == """
            {"triggers": [
              {"name": "tick", "schedule": "every 5 minutes", "timeZone": "Europe/Paris", "url": "http://127.0.0.1:4/", "retry": true},
              {"name": "tock", "schedule": "*/2 * * * *", "url": "http://127.0.0.1:5/", "retry": false},
              {"name": "zero", "schedule": "0 9 * * 1", "url": "http://127.0.0.1:6/", "retry": false}
            ]}

            """)
    }

    @Test func skipsWhatHearthDoesNotServeWithTheReason() throws {
        let imported = try Self.run([
            "db": Self.database("google.firebase.database.ref.v1.written"),
            "web": .object(["httpsTrigger": emptyObject]),
            "call": .object(["callableTrigger": emptyObject]),
            "fs": Self.database("google.cloud.firestore.document.v1.written"),
            "gcs": Self.database("google.cloud.storage.object.v1.finalized"),
            "topic": Self.database("google.cloud.pubsub.topic.v1.messagePublished"),
            "alert": Self.database("google.firebase.firebasealerts.alerts.v1.published"),
            "signup": .object(["blockingTrigger": .object(["eventType": .string("providers/cloud.auth/eventTypes/user.beforeCreate")])]),
            "task": .object(["taskQueueTrigger": emptyObject]),
            "odd": Self.database("google.firebase.database.ref.v1.moved"),
        ], urls: ["db": "http://127.0.0.1:1/"])
        #expect(imported.triggers.count == 1)
        let reasons = Dictionary(uniqueKeysWithValues: imported.skipped.map { ($0.name, $0.reason) })
        #expect(imported.skipped.map(\.name) == ["alert", "call", "fs", "gcs", "odd", "signup", "task", "topic", "web"])
        #expect(reasons["web"]?.hasPrefix("an HTTPS function") == true)
        #expect(reasons["call"]?.hasPrefix("a callable function") == true)
        #expect(reasons["fs"]?.hasPrefix("a Firestore trigger (google.cloud.firestore.document.v1.written)") == true)
        #expect(reasons["gcs"]?.hasPrefix("a Cloud Storage trigger") == true)
        #expect(reasons["topic"]?.hasPrefix("a Pub/Sub trigger") == true)
        #expect(reasons["alert"]?.hasPrefix("a Firebase alerts trigger") == true)
        #expect(reasons["signup"] == "a blocking auth function (providers/cloud.auth/eventTypes/user.beforeCreate): Hearth's accounts do not call blocking functions")
        #expect(reasons["task"]?.hasPrefix("a task queue function") == true)
        #expect(reasons["odd"]?.contains("not a Realtime Database event type") == true)
    }

    @Test func refusesMissingUnknownAndRepeatedURLs() throws {
        let endpoints = ["a": Self.database("google.firebase.database.ref.v1.written"), "web": .object(["httpsTrigger": emptyObject])]
        #expect(Self.failure(endpoints, urls: [:]) == "function \"a\": no URL: give --url a=http://host:port/ (where that function listens)")
        #expect(Self.failure(endpoints, urls: ["a": "http://127.0.0.1:1/", "b": "http://127.0.0.1:2/"])
                == "--url b: the manifest has no function of that name (its functions: a, web)")
        #expect(Self.failure(endpoints, urls: ["a": "http://127.0.0.1:1/", "web": "http://127.0.0.1:2/"])?
                    .hasPrefix("--url web: that function is not imported (an HTTPS function") == true)
        #expect(Self.failure(endpoints, urls: ["a": "ftp://x/"])?.hasPrefix("function \"a\": \"url\":") == true)
        #expect(Self.failure(["s": .object(["scheduleTrigger": .object(["schedule": .string("* * * * *")])])], urls: [:])?
                    .hasPrefix("function \"s\": no URL") == true)
        #expect(throws: FunctionsManifest.ImportError(reason: "--url a is given twice")) {
            try FunctionsManifest.urls(["a=http://127.0.0.1:1/", "a=http://127.0.0.1:2/"])
        }
        #expect(throws: FunctionsManifest.ImportError(reason: "--url =http://x/: expected NAME=URL")) { try FunctionsManifest.urls(["=http://x/"]) }
        #expect(throws: FunctionsManifest.ImportError(reason: "--url a: expected NAME=URL")) { try FunctionsManifest.urls(["a"]) }
        #expect(try FunctionsManifest.urls(["a=http://h/?x=1"]) == ["a": "http://h/?x=1"])
    }

    @Test func refusesValuesItCannotCarryAndEmptyResults() {
        let url = ["a": "http://127.0.0.1:1/"]
        #expect(Self.failure(["a": Self.database("google.firebase.database.ref.v1.written", timeout: .int(541))], urls: url)?
                    .hasPrefix("function \"a\": \"timeoutSeconds\" must be an integer in 1...540") == true)
        #expect(Self.failure(["a": Self.database("google.firebase.database.ref.v1.written", timeout: .string("{{ params.T }}"))], urls: url)?
                    .hasPrefix("function \"a\": timeoutSeconds must be a literal integer") == true)
        #expect(Self.failure(["a": Self.database("google.firebase.database.ref.v1.written", retry: .string("{{ params.R }}"))], urls: url)?
                    .hasPrefix("function \"a\": retry must be a literal") == true)
        #expect(Self.failure(["a": Self.database("google.firebase.database.ref.v1.written", ref: "a/{x=**}/{y=**}")], urls: url)?
                    .hasPrefix("function \"a\": \"ref\":") == true)
        // firebase-functions takes instance patterns such as `shard-*`; Hearth's are whole segments.
        #expect(Self.failure(["a": Self.database("google.firebase.database.ref.v1.written", instance: "shard-*")], urls: url)?
                    .hasPrefix("function \"a\": \"instance\": shard-*: a wildcard or parameter must be the whole segment") == true)
        #expect(Self.failure(["bad.name": Self.database("google.firebase.database.ref.v1.written")], urls: ["bad.name": "http://127.0.0.1:1/"])?
                    .hasPrefix("function \"bad.name\": \"name\" must be") == true)
        #expect(Self.failure(["web": .object(["httpsTrigger": emptyObject])], urls: [:])
                == "no database or scheduled function in the manifest: nothing to import")
        #expect(throws: FunctionsManifest.ImportError.self) { try FunctionsManifest.importTriggers(manifest: emptyObject, urls: [:]) }
    }

    @Test func refusesMoreTriggersThanAFileHolds() throws {
        func endpoints(_ count: Int) -> ([String: JSONValue], [String: String]) {
            let names = (0..<count).map { "f\($0)" }
            return (Dictionary(uniqueKeysWithValues: names.map { ($0, Self.database("google.firebase.database.ref.v1.written")) }),
                    Dictionary(uniqueKeysWithValues: names.map { ($0, "http://127.0.0.1:1/") }))
        }
        let (most, mostURLs) = endpoints(TriggerLimits.maxTriggers)
        #expect(try Self.run(most, urls: mostURLs).triggers.count == TriggerLimits.maxTriggers)
        let (over, overURLs) = endpoints(TriggerLimits.maxTriggers + 1)
        #expect(Self.failure(over, urls: overURLs) == "\(TriggerLimits.maxTriggers + 1) triggers; a triggers file holds at most \(TriggerLimits.maxTriggers)")
    }
}

/// `{}` (a bare `.object([:])` is ambiguous beside the literal helpers).
private let emptyObject = JSONValue.object([JSONKey: JSONValue]())
