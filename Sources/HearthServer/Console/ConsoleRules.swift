import HearthDatabase
import HearthAccounts
import HearthHTTP
import HearthJSON
import HearthRules

/// The console's Rules screen: the rules file, its compile errors with
/// line and column before saving, saving through the same path as
/// `PUT /.settings/rules.json`, the last versions of the rules (whoever changed them,
/// `RulesHistory`), and the simulator with the trace of the rules that decided
/// (`--explain`).
extension ConsoleRoute {
    func rules(_ request: HTTPRequest, _ endpoint: String, session: ConsoleAccounts.Session,
               respond: @escaping @Sendable (HTTPResponse) -> Void) {
        guard let settings = context.rulesSettings else { return respond(Self.error(404, "this server's rules are not managed here")) }
        switch (endpoint, request.method) {
        case ("rules", "GET"):
            let file = settings.get(strict: false)
            guard file.status == 200 else { return respond(Self.error(503, "the rules file cannot be read")) }
            respond(Self.json(["text": .string(String(decoding: file.body, as: UTF8.self))]))
        case ("rules/check", "POST"):
            guard let text = Self.text(request) else { return respond(Self.error(400, "send {\"text\": \"<rules>\"}")) }
            respond(Self.json(["errors": .array(Self.diagnostics(text))]))
        case ("rules", "PUT"):
            guard let text = Self.text(request) else { return respond(Self.error(400, "send {\"text\": \"<rules>\"}")) }
            let errors = Self.diagnostics(text)
            guard errors.isEmpty else { return respond(Self.json(["errors": .array(errors)], status: 400)) }
            let saved = settings.put(Array(text.utf8), dryRun: false, by: .console(session.email))
            guard saved.status == 200 else { return respond(Self.error(saved.status, "the rules were not saved")) }
            respond(Self.json(["saved": true]))
        case ("rules/history", "GET"):
            guard let versions = try? settings.history.versions() else { return respond(Self.error(503, "the rules' history cannot be read")) }
            respond(Self.json(.array(versions.map {
                .object(["id": .int($0.id), "savedAt": .int($0.savedAt), "savedBy": .string($0.savedBy), "text": .string($0.text)])
            })))
        case ("rules/simulate", "POST"):
            simulate(request, respond: respond)
        default:
            respond(Self.error(404, "no such console API"))
        }
    }

    static func text(_ request: HTTPRequest) -> String? {
        guard case .object(let body)? = try? JSONParser.parse(request.body) else { return nil }
        return body["text"]?.stringValue
    }

    /// The compile errors of `text`, each with its line and column (empty when it compiles).
    static func diagnostics(_ text: String) -> [JSONValue] {
        do {
            _ = try RuleSet.compile(text)
            return []
        } catch {
            return error.diagnostics.map {
                .object(["line": .int(Int64($0.line)), "column": .int(Int64($0.column)), "rule": .string($0.rulePath), "message": .string($0.message)])
            }
        }
    }

    /// `{"operation": "read"|"set"|"update", "path", "auth": null | {"uid", "provider", "claims"}, "value"}`:
    /// the running rules' decision on the current data, with every rule evaluated.
    func simulate(_ request: HTTPRequest, respond: @escaping @Sendable (HTTPResponse) -> Void) {
        guard case .object(let body)? = try? JSONParser.parse(request.body),
              let operation = body["operation"]?.stringValue, ["read", "set", "update"].contains(operation),
              let rawPath = body["path"]?.stringValue, let path = try? DataPath(string: rawPath) else {
            return respond(Self.error(400, "send operation (read, set or update), a valid path, auth and value"))
        }
        guard let policy = context.policy as? RulesAccessPolicy else { return respond(Self.error(404, "no rules to simulate")) }
        // Anything but null or an object is refused, not simulated as signed out; so are a
        // provider and claims of the wrong type, not simulated as the defaults.
        let auth: JSONValue
        switch body["auth"] {
        case nil, .null?:
            auth = .null
        case .object(let given)?:
            guard let uid = given["uid"]?.stringValue, !uid.isEmpty else { return respond(Self.error(400, "auth needs a uid")) }
            let provider: String
            switch given["provider"] {
            case nil, .null?: provider = "password"
            case .string(let name)?: provider = name
            default: return respond(Self.error(400, "auth's provider must be a string"))
            }
            var token: [JSONKey: JSONValue] = [:]
            switch given["claims"] {
            case nil, .null?: break
            case .object(let claims)?: token = claims
            default: return respond(Self.error(400, "auth's claims must be an object"))
            }
            token["sub"] = .string(uid)
            token["user_id"] = .string(uid)
            token["firebase"] = .object(["sign_in_provider": .string(provider)])
            auth = .object(["uid": .string(uid), "provider": .string(provider), "token": .object(token)])
        default:
            return respond(Self.error(400, "auth must be null (signed out) or an object with a uid"))
        }
        var writes: [(path: DataPath, value: JSONValue?)] = []
        switch operation {
        case "set":
            do {
                writes = [(path, try FirebaseTree.normalize(body["value"] ?? .null, at: path).map(FirebaseTree.withoutPriorities))]
            } catch {
                return respond(Self.error(400, "the value cannot be stored: \(error)"))
            }
        case "update":
            do {
                writes = try MultiPathUpdate.parse(base: path, body: body["value"] ?? .null).map { ($0.path, $0.value) }
            } catch {
                return respond(Self.error(400, "an update needs an object of paths to values: \(error)"))
            }
        default:
            break
        }
        let rules = policy.rules
        let now = accounts.clock()
        let (caller, written) = (auth, writes)
        context.database.read(path, as: Caller(auth: .null, isAdmin: true), { view -> RuleDecision in
            let data = StoreRuleSource(view: view)
            return operation == "read"
                ? rules.canRead(path, data: data, auth: caller, now: now, query: nil, explain: true)
                : rules.canWrite(written, data: data, auth: caller, now: now, explain: true)
        }, completion: { result in
            switch result {
            case .success(let decision):
                respond(Self.json(["allowed": .bool(decision.allowed), "trace": .array(decision.explanation.map(JSONValue.string))]))
            case .failure:
                respond(Self.error(503, "the data cannot be read"))
            }
        })
    }
}
