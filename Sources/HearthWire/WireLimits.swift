/// Every bound the wire adapter enforces on what a client sends (each a named constant with
/// a test that crosses it).
public struct WireLimits: Sendable, Equatable {
    /// Largest message after its chunks are joined (docs/protocol/wire.md §2.1). The SDKs
    /// cut messages into 16,384-character chunks; the default lets through the most one
    /// REST write may carry.
    public var maxMessageBytes: Int = WireLimits.defaultMaxMessageBytes
    /// Most chunks one message may announce (`N` then N frames). Every chunk but the last
    /// is `sdkChunkCharacters` long (at least that many bytes), so a larger count cannot
    /// carry a message within `maxMessageBytes`: it is refused when announced (close 1009),
    /// before any chunk is held. iOS itself never parses a count above 9,999.
    public var maxChunks: Int = WireLimits.defaultMaxChunks

    public static let defaultMaxMessageBytes = 16 * 1024 * 1024
    /// The SDKs' chunk size (docs/protocol/wire.md §2.1), in characters (UTF-16 units),
    /// each at least a byte.
    public static let sdkChunkCharacters = 16_384
    /// 1,025: the chunks a message of `defaultMaxMessageBytes` needs at most.
    public static let defaultMaxChunks = defaultMaxMessageBytes / sdkChunkCharacters + 1

    public init() {}
}
