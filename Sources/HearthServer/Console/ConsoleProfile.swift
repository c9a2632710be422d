import HearthHTTP
import HearthJSON

/// The console's Profile screen: `POST /console/api/profile?action=start&duration=S`,
/// `action=status`, `action=stop` in the chosen namespace (`ns`), the same window and report
/// as `POST /.profile` (docs/profiling.md), for the signed-in administrator (the CSRF check
/// passed in `ConsoleRoute.api`).
extension ConsoleRoute {
    func profile(_ request: HTTPRequest, respond: @escaping @Sendable (HTTPResponse) -> Void) {
        guard request.method == "POST" else { return respond(Self.error(405, "method not allowed")) }
        let node = ProfileEndpoint.node(request, leaseID: context.wire?.onDisconnect.leaseEpoch)
        switch ProfileEndpoint.answer(Router.parameters(of: request), database: context.database, namespace: context.namespaceLabel, node: node) {
        case .success(let report): respond(Self.json(report))
        case .failure(let refusal): respond(Self.error(refusal.status, refusal.message))
        }
    }
}
