import HearthAuth
import HearthHTTP

/// Where the emulator's credentials may come from (`--accept-emulator-owner`): the `owner`
/// token (admin), firebase-admin's unsigned custom tokens and the SDKs' unsigned mock ID
/// tokens (`authenticatedContext`) are honoured only on a request that comes straight from
/// this machine, and not from a web page of another origin:
///
/// * its socket peer is a loopback address and it carries none of `forwardingHeaders`:
///   Hearth refuses the flag unless it listens on loopback, but a reverse proxy on the
///   same host (nginx) connects from 127.0.0.1 too, and a request it forwards is some
///   outside client's;
/// * its `Origin`, when present, is a loopback origin (`LoopbackOrigin`): any web page the
///   developer opens can make the browser send requests to localhost, and a browser
///   always sends `Origin` on a cross-origin `fetch`, a form's POST and a WebSocket;
/// * on `/.lp`, whose requests are `<script>` loads that carry no `Origin`, its `Referer`
///   is present and a loopback page's. A page can tell the browser to send no `Referer`
///   (`Referrer-Policy: no-referrer`), so one missing is refused too; the SDKs send it
///   from every page that has not turned it off.
///
/// Node processes (firebase-admin, `@firebase/rules-unit-testing`) send neither header.
enum LocalOnlyCredentials {
    /// The headers a proxy or CDN adds when it forwards a request (nginx's site in
    /// scripts/nginx sets the first two; the others are the common spellings of proxies,
    /// load balancers and CDNs). Any of them present: the request is not straight from
    /// this machine.
    static let forwardingHeaders = [
        "X-Forwarded-For", "Forwarded", "X-Real-IP", "X-Forwarded-Host", "X-Forwarded-Proto", "Via", "CF-Connecting-IP",
        "True-Client-IP", "X-Client-IP", "X-Original-Forwarded-For", "Fastly-Client-IP", "X-Cluster-Client-IP",
    ]

    /// Why a request may not use the emulator's credentials; nil when it may.
    enum Refusal: Equatable {
        /// Its peer is not a loopback address.
        case remotePeer
        /// It carries this forwarding header.
        case forwarded(String)
        /// Its `Origin` is not a loopback origin.
        case foreignOrigin
        /// A `/.lp` request whose `Referer` is missing or not a loopback page.
        case foreignReferer
    }

    /// Why `request` may not carry the emulator's credentials, nil when it came straight
    /// from this machine and not from another origin's page. (A request a connection made
    /// always has its peer's address; one built in process, with none, is judged by its
    /// headers alone.)
    static func refusal(_ request: HTTPRequest) -> Refusal? {
        let peer = request.peerAddress.isEmpty ? request.remoteAddress : request.peerAddress
        guard peer.isEmpty || HearthService.isLoopback(peer) else { return .remotePeer }
        if let header = forwardingHeaders.first(where: { request.headers[$0] != nil }) { return .forwarded(header) }
        if let origin = request.headers["Origin"], !LoopbackOrigin.isLoopback(origin: origin) { return .foreignOrigin }
        if request.path == LongPollEndpoint.path {
            guard let referer = request.headers["Referer"], LoopbackOrigin.isLoopback(referer: referer) else { return .foreignReferer }
        }
        return nil
    }

    /// True when `request` may carry the emulator's credentials (`refusal` is nil).
    static func isDirectLocal(_ request: HTTPRequest) -> Bool {
        refusal(request) == nil
    }

    /// False for the emulator's credentials on a request that may not carry them; true for
    /// every other token (judged by the `Authenticator` as usual).
    static func admissible(_ token: String, _ request: HTTPRequest) -> Bool {
        !isEmulatorCredential(token) || isDirectLocal(request)
    }

    /// True for the emulator's `owner` token and for the SDKs' unsigned mock tokens
    /// (`alg: none`): credentials honoured only straight from this machine.
    static func isEmulatorCredential(_ token: String) -> Bool {
        isOwnerToken(token) || EmulatorMockToken.isUnsigned(token)
    }

    /// True when `token` is the emulator's `owner` token (compared in constant time).
    static func isOwnerToken(_ token: String) -> Bool {
        ConstantTime.equals(Array(token.utf8), Array(Authenticator.emulatorOwnerToken.utf8))
    }

    /// Whether a CORS preflight may be told that `Authorization` is allowed: not, in
    /// emulator mode, for a page whose origin is not a loopback one (the request itself
    /// would be refused the emulator's credentials anyway; this stops the browser
    /// sending them at all). Outside emulator mode, and with no `Origin`: yes.
    static func preflightMayAllowAuthorization(_ request: HTTPRequest, emulatorMode: Bool) -> Bool {
        guard emulatorMode, let origin = request.headers["Origin"] else { return true }
        return LoopbackOrigin.isLoopback(origin: origin)
    }
}
