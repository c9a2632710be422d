/// The walks' probes over a location's rows (the smallest stored path >= or > a bound and
/// below another, or the largest in a range) answered from windows of rows read ahead,
/// for an engine whose probes are round trips. A read of up to `window` paths tells every
/// stored path in a stretch of the rows; a later probe inside that stretch, either way, is
/// answered from it. The last `keptReads` reads are kept (at most that many windows of
/// paths), and each read after the first doubles the window, up to `maxWindow`. Paths
/// compare as UTF-8 bytes, the rows' own order. One instance serves one walk, inside one
/// snapshot.
package final class ReadAheadProbes {
    /// Up to `limit` stored paths >= (or > when not `inclusive`) `lower` and < `upper`
    /// (unbounded: nil), in order.
    package typealias Fetch = (_ lower: String, _ inclusive: Bool, _ upper: String?, _ limit: Int) throws(StoreError) -> [String]
    /// Up to `limit` stored paths >= `lower` and < `upper`, from the largest down.
    package typealias FetchBack = (_ lower: String, _ upper: String, _ limit: Int) throws(StoreError) -> [String]

    /// The most paths one read asks for.
    package static let maxWindow = 256
    /// The paths the first read asks for.
    static let firstWindow = 8
    /// The reads whose stretches are kept.
    package static let keptReads = 8

    /// A stretch of the rows whose every stored path is known.
    struct Known {
        /// Where it starts, and whether that path itself is in it.
        var low: String
        var lowInclusive: Bool
        /// Every path below `high` is in it (nil: to the end of the rows); so is `high`
        /// itself when a read found it, which adds nothing a probe's exclusive bound needs.
        var high: String?
        /// Its stored paths, in order.
        var paths: [String]

        /// Whether every path from `bound` (or just past it) on is in the stretch, up to its end.
        func startsBy(_ bound: String, inclusive: Bool) -> Bool {
            ReadAheadProbes.less(low, bound) || (ReadAheadProbes.same(low, bound) && (lowInclusive || !inclusive))
        }

        /// Whether every path below `bound` (nil: the end of the rows) down to its start is in it.
        func endsBy(_ bound: String?) -> Bool {
            guard let high else { return true }
            guard let bound else { return false }
            return !ReadAheadProbes.less(high, bound)  // bound <= high
        }

        func first(after lower: String, inclusive: Bool, before upper: String?) -> String?? {
            guard startsBy(lower, inclusive: inclusive) else { return .none }
            let at = paths.partitioningIndex { inclusive ? !ReadAheadProbes.less($0, lower) : ReadAheadProbes.less(lower, $0) }
            if at < paths.count {
                let path = paths[at]
                return .some(upper.map { ReadAheadProbes.less(path, $0) } ?? true ? path : nil)
            }
            return endsBy(upper) ? .some(nil) : .none
        }

        func last(from lower: String, before upper: String) -> String?? {
            guard endsBy(upper) else { return .none }
            let at = paths.partitioningIndex { !ReadAheadProbes.less($0, upper) }
            if at > 0 {
                let path = paths[at - 1]
                return .some(ReadAheadProbes.less(path, lower) ? nil : path)
            }
            return startsBy(lower, inclusive: true) ? .some(nil) : .none
        }
    }

    private let maxWindow: Int
    private var window: Int
    /// What the last reads told, the latest last.
    private var known: [Known] = []
    /// Reads made (for tests).
    package private(set) var reads = 0

    /// `maxWindow` 1 reads one path per probe, as a probe without a window would.
    package init(maxWindow: Int = ReadAheadProbes.maxWindow) {
        self.maxWindow = max(1, maxWindow)
        self.window = min(Self.firstWindow, self.maxWindow)
    }

    static func less(_ a: String, _ b: String) -> Bool { a.utf8.lexicographicallyPrecedes(b.utf8) }
    /// Equal as bytes (`==` on `String` is canonical equivalence: `é` equals `e\u{301}`).
    static func same(_ a: String, _ b: String) -> Bool { a.utf8.elementsEqual(b.utf8) }

    /// The smallest stored path >= (or >) `lower` and < `upper`.
    package func first(after lower: String, inclusive: Bool, before upper: String?, fetch: Fetch) throws(StoreError) -> String? {
        for stretch in known.reversed() {
            if let answer = stretch.first(after: lower, inclusive: inclusive, before: upper) { return answer }
        }
        let limit = nextLimit()
        let paths = try fetch(lower, inclusive, upper, limit)
        // Fewer than asked for: every path of the range; else every one up to the last.
        keep(paths.count < limit
            ? Known(low: lower, lowInclusive: inclusive, high: upper, paths: paths)
            : Known(low: lower, lowInclusive: inclusive, high: paths.last, paths: paths))
        return paths.first
    }

    /// The largest stored path >= `lower` and < `upper`.
    package func last(from lower: String, before upper: String, fetch: FetchBack) throws(StoreError) -> String? {
        for stretch in known.reversed() {
            if let answer = stretch.last(from: lower, before: upper) { return answer }
        }
        let limit = nextLimit()
        let paths = try fetch(lower, upper, limit)
        keep(paths.count < limit
            ? Known(low: lower, lowInclusive: true, high: upper, paths: paths.reversed())
            : Known(low: paths[paths.count - 1], lowInclusive: true, high: upper, paths: paths.reversed()))
        return paths.first
    }

    private func keep(_ stretch: Known) {
        if known.count == Self.keptReads { known.removeFirst() }
        known.append(stretch)
    }

    /// The next read's size; the one after it is twice as large, up to `maxWindow`.
    private func nextLimit() -> Int {
        reads += 1
        defer { window = min(maxWindow, window * 2) }
        return window
    }
}

extension Array {
    /// The first index whose element satisfies `isPast`, for an array partitioned by it
    /// (every element that does not, before every element that does).
    fileprivate func partitioningIndex(where isPast: (Element) -> Bool) -> Int {
        var low = 0, high = count
        while low < high {
            let mid = (low + high) / 2
            if isPast(self[mid]) { high = mid } else { low = mid + 1 }
        }
        return low
    }
}
