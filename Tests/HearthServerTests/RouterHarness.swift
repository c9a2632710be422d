import Foundation
import HearthTesting
import HearthHTTP
import HearthJSON
import HearthStore
import Logging
@testable import HearthServer

/// The router over a real store in a fresh temp directory, driven in-process.
final class RouterHarness: Sendable {
    let directory = TemporaryDirectory(prefix: "hearth-server")
    let store: SQLiteTreeStore
    let router: Router

    init(policy: any AccessPolicy = OpenAccessPolicy()) throws {
        store = try SQLiteTreeStore(directory: directory.path)
        router = Router(context: RESTContext(
            store: store, policy: policy, pushIDs: SharedPushIDGenerator(), logger: Logger(label: "test")))
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
