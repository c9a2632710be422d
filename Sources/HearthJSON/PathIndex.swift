/// Many paths (a multi-location write's entries), looked up by location: the first of them
/// at, or strictly above, a location, and all of them at or below it, in their order.
///
/// For a write of n paths that reaches m locations (trigger matching, a stream's fan-out),
/// scanning the paths for each location is n × m; here each lookup is one dictionary probe
/// per level of the location's path, built once in one pass over the paths (each path
/// listed under each of its prefixes). Paths compare by code units (`DataPath ==`).
public struct PathIndex: Sendable {
    /// The first position (in `paths`' order) of each path.
    private let firstAt: [DataPath: Int]
    /// Each prefix of each path (the path itself included), with the positions of the paths
    /// at or below it, ascending.
    private let atOrBelow: [DataPath: [Int]]

    public init(_ paths: [DataPath]) {
        var firstAt: [DataPath: Int] = [:]
        var atOrBelow: [DataPath: [Int]] = [:]
        firstAt.reserveCapacity(paths.count)
        for (position, path) in paths.enumerated() {
            if firstAt[path] == nil { firstAt[path] = position }
            for length in 0...path.count {
                atOrBelow[DataPath(uncheckedSegments: Array(path.segments.prefix(length))), default: []].append(position)
            }
        }
        (self.firstAt, self.atOrBelow) = (firstAt, atOrBelow)
    }

    /// The first position of a path at or above `location` (`orAt`) or strictly above it,
    /// with that path's length; nil when none is.
    public func firstAbove(_ location: DataPath, orAt: Bool = false) -> (position: Int, length: Int)? {
        var found: (position: Int, length: Int)?
        for length in 0..<(orAt ? location.count + 1 : location.count) {
            if let position = firstAt[DataPath(uncheckedSegments: Array(location.segments.prefix(length)))],
               position < found?.position ?? .max {
                found = (position, length)
            }
        }
        return found
    }

    /// The positions of the paths at or below `location`, ascending.
    public func atOrBelow(_ location: DataPath) -> [Int] { atOrBelow[location] ?? [] }
}
