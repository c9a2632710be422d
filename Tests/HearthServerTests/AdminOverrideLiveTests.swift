import HearthTesting
import Testing

/// `auth_variable_override` (docs/protocol/rest.md §1.3, docs/protocol/admin-client.md §2):
/// an admin that names an identity is judged by the rules as that identity, never as an
/// admin.
@Suite struct AdminOverrideLiveTests {
    @Test func theOverrideIsJudgedByTheRules() async throws {
        let server = try LiveServer(rules: ReferenceRules.text) { $0.auth.acceptEmulatorOwner = true }
        let owner = [("Authorization", "Bearer owner")]
        let uid = "worker-1"
        let favorite = #"{"id":"f1","name":"Oslo","latitude":59.9,"longitude":10.7,"createdAt":1700000000000,"createdBy":"worker-1"}"#
        // As admin: everything.
        #expect(try server.request("GET", "/users.json", headers: owner).status == 200)
        // As worker-1: its own favourites only.
        let asWorker = "auth_variable_override=%7B%22uid%22:%22\(uid)%22%7D"
        #expect(try server.request("PUT", "/users/\(uid)/favorites/f1.json?\(asWorker)", favorite, headers: owner).status == 200)
        #expect(try server.request("GET", "/users.json?\(asWorker)", headers: owner).status == 401)
        #expect(try server.request("GET", "/users/other/favorites.json?\(asWorker)", headers: owner).status == 401)
        // As signed out (`null`), as the SDK sends it.
        #expect(try server.request("GET", "/users/\(uid)/favorites.json?auth_variable_override=null", headers: owner).status == 401)
        // Streams too.
        let stream = try server.stream("/users.json?ns=demo&auth_variable_override=null", headers: owner)
        #expect(try stream.readHead().status == 401)
        let own = try server.stream("/users/\(uid)/favorites.json?\(asWorker)", headers: owner)
        #expect(try own.readHead().status == 200)
        await server.stop()
    }

    @Test func onlyAdminsMayOverrideAndTheValueMustBeAnObjectOrNull() async throws {
        let server = try LiveServer { $0.auth.acceptEmulatorOwner = true }
        let user = try server.anonymousUser()
        let denied = try server.request("GET", "/x.json?auth_variable_override=null", headers: [("Authorization", "Bearer \(user.token)")])
        #expect(denied.status == 401 && denied.body == #"{"error":"auth_variable_override needs an admin credential"}"#)
        #expect(try server.request("GET", "/x.json?auth_variable_override=null").status == 401)
        let bad = try server.request("GET", "/x.json?auth_variable_override=%22x%22", headers: [("Authorization", "Bearer owner")])
        #expect(bad.status == 400)
        await server.stop()
    }
}
