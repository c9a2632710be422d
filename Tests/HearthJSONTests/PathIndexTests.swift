import Testing
@testable import HearthJSON

/// `PathIndex` against the scans it replaces: the first path at or strictly above a
/// location, and every path at or below it, in the paths' order.
@Suite struct PathIndexTests {
    static func path(_ text: String) -> DataPath { try! DataPath(string: text) }

    /// Repeats, overlaps, the root, and keys that are canonically equivalent but different
    /// locations (é precomposed and not).
    static let paths = ["/a/b", "/a", "/c/d/e", "/a/b", "/\u{E9}/x", "/e\u{301}", "/", "/c/d", "/c/dd"].map(path)

    static let locations = ["/", "/a", "/a/b", "/a/b/z", "/c", "/c/d", "/c/d/e/f", "/c/dd", "/c/x", "/\u{E9}", "/\u{E9}/x",
                            "/e\u{301}/x", "/zz"].map(path)

    @Test func lookupsAgreeWithTheScans() {
        let index = PathIndex(Self.paths)
        for location in Self.locations {
            let strictly = Self.paths.indices.first { Self.paths[$0].isAncestor(of: location) }
            #expect(index.firstAbove(location)?.position == strictly, "above \(location)")
            #expect(index.firstAbove(location).map { Self.paths[$0.position].count } == index.firstAbove(location)?.length)
            let orAt = Self.paths.indices.first { Self.paths[$0].isPrefix(of: location) }
            #expect(index.firstAbove(location, orAt: true)?.position == orAt, "at or above \(location)")
            #expect(index.atOrBelow(location) == Self.paths.indices.filter { location.isPrefix(of: Self.paths[$0]) }, "below \(location)")
        }
        // Three paths are above /a/b/z ("/a/b" at 0, "/a" at 1, "/" at 6): the first in order wins.
        #expect(index.firstAbove(Self.path("/a/b/z"))?.position == 0)
    }
}
