import HearthJSON

/// Writes the value at a path as JSON while reading it, leaf row by leaf row in path order,
/// so memory stays bounded by the depth of the tree, not its size.
///
/// The output is the stored form, as `format=export` shows it: integer-keyed objects stay
/// objects (never rendered as arrays, which would need every key of an object before its
/// first byte), there are no priorities, and a missing node is `null`. Members appear in
/// the byte order of their paths (how the `nodes` table keeps them; JSON gives object
/// order no meaning), so the same data always gives the same bytes. The whole export reads
/// one snapshot (one read transaction), beside a running server. Any engine's store
/// through `run(engine:)`; the embedded engine's file directly through its own
/// `run(directory:)` (HearthSQLite).
public enum TreeExport {
    /// Output is handed to the sink in pieces of about this many bytes.
    public static let chunkBytes = 64 * 1024

    public struct Summary: Sendable, Equatable {
        /// Leaves written.
        public var leaves: Int
        /// Bytes written.
        public var bytes: Int
        package init(leaves: Int, bytes: Int) { (self.leaves, self.bytes) = (leaves, bytes) }
    }

    /// Leaf rows read per page by `run(engine:)`.
    public static let pageRows = 1_000

    /// Exports the value at `path` of any engine's store (a PostgreSQL store) to
    /// `sink`: the same bytes as `run(directory:)` gives for the same data, from one
    /// snapshot, paging through the leaves `pageRows` at a time, so memory stays bounded.
    public static func run(
        engine: any StorageEngine, at path: DataPath, sink: @escaping ([UInt8]) throws(MaintenanceError) -> Void
    ) throws(MaintenanceError) -> Summary {
        var writer = Writer(sink: sink)
        let prefixLength = path.isRoot ? 0 : path.storageKey.utf8.count + 1
        do {
            try engine.readSync { view in
                var after: String? = nil
                while true {
                    let rows = try view.leafRows(at: path, after: after, limit: pageRows)
                    if after == nil, rows.count == 1, rows[0].path == path.storageKey {
                        return writer.leaf(rows[0].value)
                    }
                    for row in rows {
                        try writer.member(LeafRow.segments(row.path.utf8.dropFirst(prefixLength)), row.value, fullPath: row.path)
                        try writer.flushIfFull()
                    }
                    guard rows.count == pageRows, let last = rows.last else { break }
                    after = last.path
                }
                writer.finish()
            }
        } catch let error as MaintenanceError {
            throw error
        } catch let error as StoreError {
            throw .store(error)
        } catch {
            throw .store(.corrupt("\(error)"))
        }
        try writer.flush()
        return Summary(leaves: writer.leaves, bytes: writer.written)
    }

    /// The JSON being written: the keys of the open objects, innermost last.
    package struct Writer {
        package let sink: ([UInt8]) throws(MaintenanceError) -> Void
        package var buffer: [UInt8] = []
        package var open: [Substring] = []
        /// The innermost open object has no member yet.
        package var empty = true
        /// Segments of the last leaf, to catch a (corrupt) row below a leaf.
        package var lastLeaf: ArraySlice<Substring> = []
        package var started = false
        package var leaves = 0
        package var written = 0

        package init(sink: @escaping ([UInt8]) throws(MaintenanceError) -> Void) {
            self.sink = sink
            buffer.reserveCapacity(TreeExport.chunkBytes + 1024)
        }

        /// The whole export is one leaf.
        package mutating func leaf(_ value: JSONValue) {
            JSONWriter.write(value, into: &buffer)
            leaves = 1
        }

        /// One leaf row below the exported path, given by its relative segments.
        package mutating func member(_ segments: ArraySlice<Substring>, _ value: JSONValue, fullPath: String) throws(MaintenanceError) {
            if !started {
                buffer.append(UInt8(ascii: "{"))
                started = true
            }
            let parents = segments.dropLast()
            if !lastLeaf.isEmpty, parents.count >= lastLeaf.count, parents.prefix(lastLeaf.count).elementsEqual(lastLeaf) {
                throw .store(.corrupt("a leaf and a subtree both at /\(fullPath)"))
            }
            // Close the objects this row is not in, open the ones it is in.
            var common = 0
            while common < open.count, common < parents.count, open[common] == parents[parents.startIndex + common] {
                common += 1
            }
            while open.count > common {
                buffer.append(UInt8(ascii: "}"))
                open.removeLast()
                empty = false
            }
            for segment in parents.dropFirst(common) {
                separate()
                JSONWriter.writeString(String(segment), into: &buffer)
                buffer.append(UInt8(ascii: ":"))
                buffer.append(UInt8(ascii: "{"))
                open.append(segment)
                empty = true
            }
            separate()
            JSONWriter.writeString(String(segments.last ?? ""), into: &buffer)
            buffer.append(UInt8(ascii: ":"))
            JSONWriter.write(value, into: &buffer)
            empty = false
            lastLeaf = segments
            leaves += 1
        }

        private mutating func separate() {
            if !empty { buffer.append(UInt8(ascii: ",")) }
        }

        /// Closes every open object (or writes `null` when there were no rows).
        package mutating func finish() {
            guard started else {
                buffer.append(contentsOf: "null".utf8)
                return
            }
            buffer.append(contentsOf: repeatElement(UInt8(ascii: "}"), count: open.count + 1))
            open.removeAll()
        }

        package mutating func flushIfFull() throws(MaintenanceError) {
            if buffer.count >= TreeExport.chunkBytes { try flush() }
        }

        package mutating func flush() throws(MaintenanceError) {
            guard !buffer.isEmpty else { return }
            try sink(buffer)
            written += buffer.count
            buffer.removeAll(keepingCapacity: true)
        }
    }
}
