extension HTTPConnection {
    /// What every connection of one server shares: one object, referenced (not copied)
    /// by each connection, which keeps an idle connection small.
    final class Context: Sendable {
        let handler: any HTTPHandler
        let limits: HTTPLimits
        let counters: ServerCounters
        let clock: @Sendable () -> Nanoseconds
        let log: @Sendable (String) -> Void
        let trustedProxies: Set<String>
        let accessLog: (@Sendable (HTTPAccessRecord) -> Void)?
        let largeStreamUnit: (@Sendable (Int) -> Void)?
        let requestIDPrefix: String
        /// Connections per client address (`HTTPLimits.maxConnectionsPerAddress`).
        let addresses: AddressCounts
        /// Bytes held for incomplete input (`HTTPLimits.maxIncompleteBytes`).
        let incomplete: IncompleteBytes
        /// Connections past their address's cap, kept for health checks
        /// (`HTTPLimits.uncappedConnectionsPerAddress`), and the paths they may ask for.
        let reserve: AddressCounts
        let uncappedPaths: Set<String>
        /// Called once, after the fd is closed.
        let onClose: @Sendable () -> Void

        init(handler: any HTTPHandler, limits: HTTPLimits, counters: ServerCounters,
             clock: @escaping @Sendable () -> Nanoseconds, log: @escaping @Sendable (String) -> Void,
             trustedProxies: Set<String>, accessLog: (@Sendable (HTTPAccessRecord) -> Void)?,
             largeStreamUnit: (@Sendable (Int) -> Void)?,
             requestIDPrefix: String, addresses: AddressCounts, incomplete: IncompleteBytes,
             reserve: AddressCounts, uncappedPaths: Set<String>, onClose: @escaping @Sendable () -> Void) {
            self.incomplete = incomplete
            self.reserve = reserve
            self.uncappedPaths = uncappedPaths
            self.handler = handler
            self.limits = limits
            self.counters = counters
            self.clock = clock
            self.log = log
            self.trustedProxies = trustedProxies
            self.accessLog = accessLog
            self.largeStreamUnit = largeStreamUnit
            self.requestIDPrefix = requestIDPrefix
            self.addresses = addresses
            self.onClose = onClose
        }
    }
}
