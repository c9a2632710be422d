import Foundation
import Testing

/// The built binary driven with curl, as the README shows it.
@Suite struct RESTEndToEndTests {
    let dir = TemporaryDirectory()

    @Test func everyMethodWithCurl() throws {
        let server = try HearthProcess.serve(dataDirectory: dir.path)
        let base = server.baseURL

        let put = try curl("PUT", base + "/users/alice/favorites/f1.json", body: #"{"name":"Oslo","latitude":59.91,"createdAt":1700000000000}"#)
        #expect(put.status == 200)
        #expect(json(put.body) == json(#"{"name":"Oslo","latitude":59.91,"createdAt":1700000000000}"#))

        let get = try curl("GET", base + "/users/alice/favorites/f1.json")
        #expect(get.status == 200)
        #expect(get.body == #"{"createdAt":1700000000000,"latitude":59.91,"name":"Oslo"}"#)
        #expect(get.headers["content-type"]?.hasPrefix("application/json") == true)

        // The .json suffix is optional.
        #expect(try curl("GET", base + "/users/alice/favorites/f1/name").body == #""Oslo""#)

        let post = try curl("POST", base + "/users/alice/favorites.json", body: #"{"name":"Rome"}"#)
        #expect(post.status == 200)
        let name = (json(post.body) as? [String: Any])?["name"] as? String
        #expect(name?.count == 20)
        #expect(try curl("GET", base + "/users/alice/favorites/\(name ?? "x")/name.json").body == #""Rome""#)

        let patch = try curl("PATCH", base + "/users.json", body: #"{"alice/favorites/f1/name":"Bergen","bob/city":"Paris"}"#)
        #expect(patch.status == 200)
        #expect(try curl("GET", base + "/users/alice/favorites/f1/name.json").body == #""Bergen""#)
        #expect(try curl("GET", base + "/users/bob.json").body == #"{"city":"Paris"}"#)

        let silent = try curl("PUT", base + "/users/bob/city.json?print=silent", body: #""Lyon""#)
        #expect(silent.status == 204)
        #expect(silent.body.isEmpty)

        let pretty = try curl("GET", base + "/users/bob.json?print=pretty")
        #expect(pretty.body.contains("\n"))
        #expect(json(pretty.body) == json(#"{"city":"Lyon"}"#))

        let shallow = try curl("GET", base + "/users.json?shallow=true")
        #expect(json(shallow.body) == json(#"{"alice":true,"bob":true}"#))

        let override = try curl("POST", base + "/users/bob.json", body: "null", headers: ["X-HTTP-Method-Override: DELETE"])
        #expect(override.status == 200)
        #expect(try curl("GET", base + "/users/bob.json").body == "null")

        let delete = try curl("DELETE", base + "/users/alice.json")
        #expect(delete.status == 200 && delete.body == "null")
        #expect(try curl("GET", base + "/.json").body == "null")

        let head = try curl("HEAD", base + "/healthz")
        #expect(head.status == 200)
        #expect(try curl("GET", base + "/healthz").body == #"{"status":"ok"}"#)
        #expect(try curl("GET", base + "/readyz").status == 200)

        server.signal(SIGTERM)
        #expect(try server.waitForExit() == 0)
    }

    @Test func badInputGetsAClearError() throws {
        let server = try HearthProcess.serve(dataDirectory: dir.path)
        let base = server.baseURL
        let badJSON = try curl("PUT", base + "/a.json", body: "{not json")
        #expect(badJSON.status == 400)
        #expect((json(badJSON.body) as? [String: Any])?["error"] is String)

        let badKey = try curl("GET", base + "/a%23b.json")
        #expect(badKey.status == 400)
        #expect(badKey.body.contains("Invalid path"))

        let badChild = try curl("PATCH", base + "/a.json", body: #"{"ok":1,"b$d":2}"#)
        #expect(badChild.status == 400)
        #expect(try curl("GET", base + "/a.json").body == "null")

        let empty = try curl("PUT", base + "/a.json", body: "")
        #expect(empty.status == 400)

        let method = try curl("BREW", base + "/a.json")
        #expect(method.status == 405)
        server.signal(SIGTERM)
        #expect(try server.waitForExit() == 0)
    }

    @Test func settingsComeFromEnvironmentVariables() throws {
        let rules = try HearthProcess.writeRules(HearthProcess.openRules, in: dir.path)
        let child = try HearthProcess(arguments: ["serve"], dataDirectory: dir.path, environment: [
            "HEARTH_PORT": "0", "HEARTH_DATA_DIR": dir.path, "HEARTH_RULES": rules,
        ])
        try child.waitUntilListening()
        #expect(child.port > 0)
        #expect(try curl("PUT", child.baseURL + "/x.json", body: "1").status == 200)
        #expect(FileManager.default.fileExists(atPath: dir.path + "/hearth.sqlite"))
        child.signal(SIGINT)
        #expect(try child.waitForExit() == 0)
    }

    @Test func dataSurvivesARestart() throws {
        do {
            let server = try HearthProcess.serve(dataDirectory: dir.path)
            #expect(try curl("PUT", server.baseURL + "/keep.json", body: #"{"a":[1,2,3]}"#).status == 200)
            server.signal(SIGTERM)
            #expect(try server.waitForExit() == 0)
        }
        let again = try HearthProcess.serve(dataDirectory: dir.path)
        #expect(try curl("GET", again.baseURL + "/keep.json").body == #"{"a":[1,2,3]}"#)
        again.signal(SIGTERM)
        #expect(try again.waitForExit() == 0)
    }
}
