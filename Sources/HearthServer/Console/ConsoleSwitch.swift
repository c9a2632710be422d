/// Whether the admin console is served at `/console/`, and which setting decided it: logged
/// at start (`logLine`), and, when it is off, the body of the 404 that `/console/` answers
/// (`offMessage`) in place of a database read, so an operator who expected the console
/// learns why it is missing and how to turn it on.
///
/// `consoleEnabled` (`HEARTH_CONSOLE`) is `on`, `off` or `auto`; `auto` serves it unless
/// `trustedProxies` (`HEARTH_TRUSTED_PROXIES`) are set, that is unless Hearth sits behind
/// a public proxy, where serving it is a choice to make deliberately. The messages name
/// the settings, never their values (the proxies' addresses stay out of a public answer).
struct ConsoleSwitch: Sendable, Equatable {
    enum Reason: Sendable, Equatable {
        /// `consoleEnabled` is `on`.
        case setOn
        /// `consoleEnabled` is `off` (or a value other than `on` and `auto`).
        case setOff
        /// `auto`, and no trusted proxies: Hearth is reached directly.
        case autoDirect
        /// `auto`, and trusted proxies are set: Hearth is behind a proxy.
        case autoBehindProxy
    }

    let reason: Reason

    /// The setting that turns the console on or off, as an environment variable and a
    /// config key.
    static let setting = "HEARTH_CONSOLE (config key consoleEnabled)"
    static let proxiesSetting = "HEARTH_TRUSTED_PROXIES (config key trustedProxies)"

    init(console: String, trustedProxies: [String]) {
        switch console {
        case "on": reason = .setOn
        case "auto": reason = trustedProxies.isEmpty ? .autoDirect : .autoBehindProxy
        default: reason = .setOff
        }
    }

    var isOn: Bool { reason == .setOn || reason == .autoDirect }

    /// Why the console is on or off, in the words of the settings.
    var why: String {
        switch reason {
        case .setOn: "\(Self.setting) is on"
        case .setOff: "\(Self.setting) is off"
        case .autoDirect: "\(Self.setting) is auto and \(Self.proxiesSetting) is not set"
        case .autoBehindProxy: "\(Self.setting) is auto and \(Self.proxiesSetting) is set, so Hearth is taken to be behind a proxy"
        }
    }

    /// The start-up line: on or off, why, and when off how to turn it on.
    var logLine: String {
        isOn ? "admin console on at \(ConsoleRoute.prefix)/: \(why)" : "admin console off: \(why); \(howToTurnOn)"
    }

    /// What to set to serve the console.
    var howToTurnOn: String {
        "set HEARTH_CONSOLE=on (config key consoleEnabled: \"on\") and restart to serve it at \(ConsoleRoute.prefix)/"
            + (reason == .autoBehindProxy ? " through the proxy (docs/console.md)" : " (docs/console.md)")
    }

    /// The error of the 404 that `/console` and `/console/...` (but for `.json` paths, which
    /// are database locations) answer while the console is off.
    var offMessage: String {
        "the admin console is off: \(why); \(howToTurnOn). Data stored under a key console is read with the .json suffix (/console.json)"
    }
}
