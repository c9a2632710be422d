import Foundation
import HearthTesting
import HearthHTTP
import HearthJSON
import HearthRules
import HearthStore
import Logging
@testable import HearthServer

/// The router over a real store in a fresh temp directory, driven in-process.
final class RouterHarness: Sendable {
    let directory = TemporaryDirectory(prefix: "hearth-server")
    let store: SQLiteTreeStore
    let router: Router

    /// Rules that allow everything, for tests about REST semantics rather than access.
    static let openRules = #"{"rules": {".read": true, ".write": true}}"#

    init(policy: (any AccessPolicy)? = nil, identify: @escaping @Sendable (HTTPRequest) -> Caller = { _ in .unauthenticated }) throws {
        store = try SQLiteTreeStore(directory: directory.path)
        var context = RESTContext(
            store: store, policy: try policy ?? RulesAccessPolicy(rules: RuleSet.compile(Self.openRules)),
            pushIDs: SharedPushIDGenerator(), logger: Logger(label: "test"))
        context.identify = identify
        router = Router(context: context)
    }

    deinit { store.close() }

    func send(_ method: String, _ target: String, _ body: String? = nil, headers: [(String, String)] = []) async -> HTTPResponse {
        let request = HTTPRequest(
            method: method, target: target, headers: HTTPHeaders(headers.map { (name: $0.0, value: $0.1) }),
            body: body.map { Array($0.utf8) } ?? [])
        return await withCheckedContinuation { continuation in
            router.handle(request, responder: HTTPResponder { continuation.resume(returning: $0) })
        }
    }
}

extension HTTPResponse {
    var text: String { String(decoding: body, as: UTF8.self) }
    var json: JSONValue? { try? JSONParser.parse(body) }
    var errorMessage: String? {
        if case .object(let o)? = json, case .string(let s)? = o["error"] { return s }
        return nil
    }
}
