import HearthStore
import HearthTesting
import Testing

/// `ReadAheadProbes` against the probes it stands for, over literal rows: every answer is
/// what a probe of the rows themselves answers, whatever the window and the order of the
/// probes, and a walk up or down the rows takes few reads.
@Suite struct ReadAheadProbesTests {
    /// Paths sorted as UTF-8 bytes, with neighbours either side of `/` and `0`, and two
    /// spellings of `é` (equal as `String`s, different as bytes).
    static let rows: [String] = {
        var rows = ["a", "a-b", "a/x", "a/y/z", "a0", "a0/q", "b", "c/1", "c/2", "c/3", "e\u{301}", "e\u{301}/k", "\u{E9}", "\u{E9}/k", "z"]
        for i in 0..<300 { rows.append("m/" + String(String(i + 1_000).dropFirst())) }
        return rows.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
    }()

    static func less(_ a: String, _ b: String) -> Bool { a.utf8.lexicographicallyPrecedes(b.utf8) }

    static func first(_ lower: String, _ inclusive: Bool, _ upper: String?, limit: Int) -> [String] {
        Array(rows.filter { row in (inclusive ? !less(row, lower) : less(lower, row)) && (upper.map { less(row, $0) } ?? true) }.prefix(limit))
    }

    static func last(_ lower: String, _ upper: String, limit: Int) -> [String] {
        Array(rows.filter { !less($0, lower) && less($0, upper) }.reversed().prefix(limit))
    }

    /// Bounds: the rows, their prefixes and extensions, strings between them.
    static let bounds: [String] = {
        var bounds = ["", "\u{10FFFF}"]
        for row in rows.prefix(20) + rows.suffix(5) + [rows[100], rows[200]] {
            bounds += [row, row + "/", row + "0", row + "-", String(row.dropLast())]
        }
        return bounds
    }()

    @Test(arguments: [1, 2, 8, 256])
    func randomProbesAreWhatTheRowsAnswer(maxWindow: Int) throws {
        var g = SplitMix64(seed: UInt64(maxWindow))
        func pick() -> String { Self.bounds[Int.random(in: 0..<Self.bounds.count, using: &g)] }
        var answered = 0
        for _ in 0..<40 {
            let probes = ReadAheadProbes(maxWindow: maxWindow)
            for _ in 0..<60 {
                let (lower, upper) = (pick(), pick())
                if Bool.random(using: &g) {
                    let inclusive = Bool.random(using: &g)
                    let bound: String? = Int.random(in: 0..<4, using: &g) == 0 ? nil : upper
                    let got = try probes.first(after: lower, inclusive: inclusive, before: bound) { lower, inclusive, upper, limit in
                        Self.first(lower, inclusive, upper, limit: limit)
                    }
                    #expect(got == Self.first(lower, inclusive, bound, limit: 1).first, "first \(lower) \(inclusive) \(String(describing: bound))")
                } else {
                    let got = try probes.last(from: lower, before: upper) { lower, upper, limit in Self.last(lower, upper, limit: limit) }
                    #expect(got == Self.last(lower, upper, limit: 1).first, "last \(lower) \(upper)")
                }
                answered += 1
            }
        }
        #expect(answered == 2_400)
    }

    /// A walk up the rows one by one, and down: every row found, in a few reads.
    @Test func aWalkTakesAReadPerWindow() throws {
        let up = ReadAheadProbes()
        var found: [String] = []
        var lower = "", inclusive = true
        while let next = try up.first(after: lower, inclusive: inclusive, before: nil, fetch: { lower, inclusive, upper, limit in
            Self.first(lower, inclusive, upper, limit: limit)
        }) {
            found.append(next)
            (lower, inclusive) = (next, false)
        }
        #expect(found == Self.rows)
        #expect(up.reads <= 7, "8, 16, … 256 paths a read: \(up.reads)")

        let down = ReadAheadProbes()
        var upper = "\u{10FFFF}"
        found = []
        while let next = try down.last(from: "", before: upper, fetch: { lower, upper, limit in Self.last(lower, upper, limit: limit) }) {
            found.append(next)
            upper = next
        }
        #expect(found == Self.rows.reversed())
        #expect(down.reads <= 7, "\(down.reads)")

        // Without a window, a read per probe (and one more to find the end).
        let one = ReadAheadProbes(maxWindow: 1)
        lower = ""
        inclusive = true
        while let next = try one.first(after: lower, inclusive: inclusive, before: nil, fetch: { lower, inclusive, upper, limit in
            Self.first(lower, inclusive, upper, limit: limit)
        }) { (lower, inclusive) = (next, false) }
        #expect(one.reads == Self.rows.count + 1)
    }

    /// A probe forward inside what a read down told (as the walk from the end makes
    /// between an object child's key and its subtree) needs no read, and the other way.
    @Test func aProbeTheOtherWayInsideARead() throws {
        let probes = ReadAheadProbes()
        let back: ReadAheadProbes.FetchBack = { lower, upper, limit in Self.last(lower, upper, limit: limit) }
        let fetch: ReadAheadProbes.Fetch = { lower, inclusive, upper, limit in Self.first(lower, inclusive, upper, limit: limit) }
        #expect(try probes.last(from: "m/", before: "m0", fetch: back) == "m/299")
        #expect(try probes.first(after: "m/295", inclusive: false, before: "m/298", fetch: fetch) == "m/296")
        #expect(try probes.first(after: "m/297", inclusive: true, before: "m/297/", fetch: fetch) == "m/297")
        #expect(try probes.first(after: "m/2990", inclusive: true, before: "m0", fetch: fetch) == nil)
        #expect(probes.reads == 1)
        #expect(try probes.first(after: "a", inclusive: true, before: "a0", fetch: fetch) == "a")
        #expect(try probes.last(from: "a", before: "a/y", fetch: back) == "a/x")
        #expect(probes.reads == 2)
    }

    /// The last `keptReads` reads answer probes; an older one's stretch is read again.
    @Test func theLastReadsAreKept() throws {
        let probes = ReadAheadProbes(maxWindow: 8)
        let fetch: ReadAheadProbes.Fetch = { lower, inclusive, upper, limit in Self.first(lower, inclusive, upper, limit: limit) }
        var (lower, inclusive) = ("m/", true)
        for _ in 0..<(8 * (ReadAheadProbes.keptReads + 1)) {
            lower = try #require(try probes.first(after: lower, inclusive: inclusive, before: "m0", fetch: fetch))
            inclusive = false
        }
        #expect(lower == "m/071")
        #expect(probes.reads == ReadAheadProbes.keptReads + 1)
        #expect(try probes.first(after: "m/010", inclusive: true, before: "m/011", fetch: fetch) == "m/010")
        #expect(probes.reads == ReadAheadProbes.keptReads + 1, "the second read's stretch is kept")
        #expect(try probes.first(after: "m/003", inclusive: true, before: "m/004", fetch: fetch) == "m/003")
        #expect(probes.reads == ReadAheadProbes.keptReads + 2, "the first read's was dropped")
    }

    /// A read from `é` (two bytes) does not cover a probe from `e` + U+0301, which sorts
    /// before it as bytes though the two are equal as `String`s.
    @Test func boundsCompareAsBytes() throws {
        let probes = ReadAheadProbes()
        let fetch: ReadAheadProbes.Fetch = { lower, inclusive, upper, limit in Self.first(lower, inclusive, upper, limit: limit) }
        #expect(try probes.first(after: "\u{E9}", inclusive: true, before: nil, fetch: fetch) == "\u{E9}")
        #expect(try probes.first(after: "e\u{301}", inclusive: true, before: nil, fetch: fetch) == "e\u{301}")
        #expect(probes.reads == 2)
    }
}
