import HearthHTTPClient

extension TriggerLimits {
    /// The interval before the next attempt after one that reached no function (the
    /// connection refused, the host unresolved or unreachable, the connection reset before
    /// any byte of an answer): fixed, never growing, at most 2 s. Nothing ran, so the
    /// receiver is down or restarting, and delivery resumes within this once it listens.
    public static let unreachedRetryMilliseconds: Int64 = 1000
    /// The longest failure text kept per event (the outbox's last error, status, logs):
    /// longer ones are cut, so a receiver cannot make the outbox or the logs grow by it.
    public static let maxLastErrorLength = 200
}

/// One failed delivery attempt, as the retry policy sees it.
enum AttemptFailure: Sendable, Equatable {
    /// No function ran: the connection was refused, the host did not resolve or could not
    /// be reached, or the connection was reset before any byte of an answer. Retried after
    /// `TriggerLimits.unreachedRetryMilliseconds`; not counted in the event's attempts.
    case unreached(String)
    /// The function answered (not 2xx, or unreadably) or did not answer in time (a
    /// timeout), or the request could not be made (TLS). Counted; exponential backoff.
    case answered(String)

    /// What the outbox and the logs keep: no URL, header or body (the client's texts carry
    /// none), at most `TriggerLimits.maxLastErrorLength` characters.
    var text: String {
        switch self {
        case .unreached(let text), .answered(let text): return Self.bounded(text)
        }
    }

    /// A non-2xx answer.
    init(status: Int) { self = .answered("HTTP \(status)") }

    /// Classifies a client error by its type (never its text).
    init(_ error: HTTPClientError) {
        switch error {
        case .connection(.refused), .connection(.unresolved), .connection(.system):
            // `.system` is a connect failure (unreachable, reset) or a reset before any
            // byte of an answer: the client reports one after answer bytes as `.badResponse`.
            self = .unreached(error.description)
        case .connection(.timeout), .connection(.tls), .timeout, .badResponse, .responseTooLarge, .invalidURL, .invalidRequest:
            self = .answered(error.description)
        }
    }

    static func bounded(_ text: String) -> String {
        text.count <= TriggerLimits.maxLastErrorLength ? text : String(text.prefix(TriggerLimits.maxLastErrorLength - 1)) + "…"
    }

    /// Milliseconds until the next attempt after this failure of an event that had
    /// `attempts` counted attempts before it: the short fixed interval when no function
    /// ran, else the exponential backoff of attempt `attempts + 1` (`base` doubling per
    /// attempt, at most `cap`, half of it random so receivers coming back are not hit in step).
    func retryDelay(attempts: Int, base: Int64, cap: Int64) -> Int64 {
        switch self {
        case .unreached:
            return TriggerLimits.unreachedRetryMilliseconds
        case .answered:
            let exponent = min(max(attempts, 0), 30)
            let ceiling = min(cap, base << Int64(exponent))
            let half = max(1, ceiling / 2)
            return half + Int64.random(in: 0...half)
        }
    }
}
