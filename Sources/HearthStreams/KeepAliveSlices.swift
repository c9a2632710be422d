/// How the hub spreads keep-alives over their interval: the streams fall into `count`
/// slices by a hash of their identity, fixed for their life, and a timer every `tick`
/// seconds sends to one slice in turn. Each stream still gets one keep-alive every
/// interval, and a tick sends to about 1/`count` of the streams. (With one tick for all,
/// 10,000 streams' keep-alives went out in one burst that held the fan-out queue and the
/// I/O loops, and the clients, while events waited behind it.)
struct KeepAliveSlices: Equatable {
    /// The seconds between ticks aimed at: the interval is cut into as many slices as it
    /// holds of these (one slice when it is shorter).
    static let tickSeconds: Double = 1
    /// Slices at most, however long the interval.
    static let maxSlices = 60

    let count: Int
    /// Seconds between two ticks: the interval over `count`.
    let tick: Double

    init(interval: Double) {
        let fit = (interval / Self.tickSeconds).rounded(.down)
        count = fit >= Double(Self.maxSlices) ? Self.maxSlices : max(1, Int(fit))
        tick = interval / Double(count)
    }

    /// The slice of the stream whose identity is `id`.
    func slice(of id: ObjectIdentifier) -> Int {
        Int(UInt(bitPattern: id.hashValue) % UInt(count))
    }
}
