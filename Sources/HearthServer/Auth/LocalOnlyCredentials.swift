import HearthAuth
import HearthHTTP

/// Where the emulator's credentials may come from (`--accept-emulator-owner`): the `owner`
/// token (admin), firebase-admin's unsigned custom tokens and the SDKs' unsigned mock ID
/// tokens (`authenticatedContext`, issue 28) are honoured only on a request
/// that comes straight from this machine: its socket peer is a loopback address and it
/// carries no proxy's forwarding header. Hearth refuses the flag unless it listens on
/// loopback, but a reverse proxy on the same host (nginx) connects from 127.0.0.1 too: a
/// request it forwards is some outside client's, and must not become an admin's.
enum LocalOnlyCredentials {
    /// The headers a proxy adds when it forwards a request (nginx's site in scripts/nginx
    /// sets the first two; the others are the common spellings).
    static let forwardingHeaders = ["X-Forwarded-For", "Forwarded", "X-Real-IP", "X-Forwarded-Host", "X-Forwarded-Proto"]

    /// True when `request` came straight from this machine, not through a proxy.
    /// (A request a connection made always has its peer's address; one built in process,
    /// with none, is judged by its headers alone.)
    static func isDirectLocal(_ request: HTTPRequest) -> Bool {
        let peer = request.peerAddress.isEmpty ? request.remoteAddress : request.peerAddress
        guard peer.isEmpty || HearthService.isLoopback(peer) else { return false }
        return !forwardingHeaders.contains { request.headers[$0] != nil }
    }

    /// False for the emulator's `owner` token on a request that did not come straight from
    /// this machine; true for every other token (judged by the `Authenticator` as usual).
    static func admissible(_ token: String, _ request: HTTPRequest) -> Bool {
        !isEmulatorCredential(token) || isDirectLocal(request)
    }

    /// True for the emulator's `owner` token and for the SDKs' unsigned mock tokens
    /// (`alg: none`, issue 28): credentials honoured only straight from this machine.
    static func isEmulatorCredential(_ token: String) -> Bool {
        isOwnerToken(token) || EmulatorMockToken.isUnsigned(token)
    }

    /// True when `token` is the emulator's `owner` token (compared in constant time).
    static func isOwnerToken(_ token: String) -> Bool {
        ConstantTime.equals(Array(token.utf8), Array(Authenticator.emulatorOwnerToken.utf8))
    }
}
