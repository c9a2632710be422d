/// Every bound the wire adapter enforces on what a client sends (STYLE habit 8).
public struct WireLimits: Sendable, Equatable {
    /// Largest message after its chunks are joined (spec §2.1). The SDKs cut messages into
    /// 16,384-character chunks; the default lets through the most one REST write may carry.
    public var maxMessageBytes: Int = 16 * 1024 * 1024
    /// Most chunks one message may announce (`N` then N frames). 16 MiB of 16,384-character
    /// chunks is 1,024; iOS itself never parses a count above 9,999.
    public var maxChunks: Int = 2_048

    public init() {}
}
