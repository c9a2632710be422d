import Glibc
import HearthJSON
import HearthServer
import HearthStore
import HearthTesting
import Logging

/// A `HearthService` on 127.0.0.1 port 0 over a fresh temp data directory: the live tier.
final class LiveServer: Sendable {
    let directory = TemporaryDirectory(prefix: "hearth-live")
    let service: HearthService
    let port: Int
    let rulesPath: String

    init(rules: String = #"{"rules": {".read": true, ".write": true}}"#,
         logger: Logger = Logger(label: "live", factory: { _ in SwiftLogNoOpLogHandler() }),
         configure: (inout HearthConfiguration) -> Void = { _ in }) throws {
        rulesPath = directory.path + "/rules.json"
        try writeFile(rulesPath, rules)
        var configuration = HearthConfiguration()
        configuration.port = 0
        configuration.dataDirectory = directory.path + "/data"
        configuration.rulesPath = rulesPath
        let location = try TestStore.location(directory: configuration.dataDirectory)
        if location.engine == "postgres" { configuration.storeURL = location.address }
        configure(&configuration)
        service = try HearthService(configuration: configuration, logger: logger)
        port = try service.start()
    }

    func stop() async {
        await service.shutdown()
    }

    func request(_ method: String, _ target: String, _ body: String? = nil, headers: [(String, String)] = []) throws -> (status: Int, body: String) {
        try liveRequest(port: port, method, target, body: body, headers: headers)
    }

    /// One request: the response's head (its headers) and body.
    func exchange(_ method: String, _ target: String, _ body: String? = nil, headers: [(String, String)] = []) throws -> (head: LiveHead, body: String) {
        try liveExchange(port: port, method, target, body: body, headers: headers)
    }

    /// Signs up an anonymous user: (uid, idToken).
    func anonymousUser() throws -> (uid: String, token: String) {
        let response = try request("POST", "/v1/accounts:signUp", "{}", headers: [("Content-Type", "application/json")])
        guard response.status == 200, case .object(let body) = try JSONParser.parse(Array(response.body.utf8)),
              let uid = body["localId"]?.stringValue, let token = body["idToken"]?.stringValue else {
            throw LiveClientError("sign-up failed: \(response)")
        }
        return (uid, token)
    }

    func stream(_ target: String, headers: [(String, String)] = [], receiveBuffer: Int? = nil) throws -> EventStreamClient {
        try EventStreamClient(port: port, target: target, headers: headers, receiveBuffer: receiveBuffer)
    }
}

func writeFile(_ path: String, _ text: String) throws {
    guard let file = fopen(path, "w") else { throw LiveClientError("cannot write \(path)") }
    defer { fclose(file) }
    fputs(text, file)
}
