import Dispatch
import HearthJSON
import HearthStore
import Synchronization

/// Applies a write to the tree inside the writer's transaction: the arrays for
/// `hearth_apply` (the SQLite engine's `TreeWriter` does the same in several statements).
enum PostgresTreeWriter {
    /// The rows replaced (-1 when more than `maxReplaced`: then nothing changed).
    static func apply(_ operation: WriteOperation, as change: Change, maxReplaced: Int, connection: PGConnection) throws(StoreError) -> Int64 {
        var entries: [String] = [], ancestors: Set<String> = []
        var rows: [LeafRow] = [], priorities: [LeafRow] = []
        for entry in operation.entries {
            entries.append(entry.path.storageKey)
            guard let value = entry.value else { continue }
            var ancestor = entry.path
            while let parent = ancestor.parent {
                ancestor = parent
                ancestors.insert(ancestor.storageKey)
            }
            LeafRow.flatten(value, at: entry.path.storageKey, into: &rows, priorities: &priorities)
        }
        let parameters: [PGValue] = [.text(PGArray.literal(entries)), .text(PGArray.literal(ancestors.sorted())), .int(Int64(maxReplaced))]
            + columns(rows) + columns(priorities)
            + [.int(change.seq), .text(change.path.storageKey), .text(change.kind.rawValue),
               .text(String(decoding: JSONWriter.write(change.data), as: UTF8.self)), .int(change.at)]
        let result = try connection.query("""
            SELECT hearth_apply($1::text[], $2::text[], $3, $4::text[], $5::smallint[], $6::bigint[], $7::float8[], $8::text[],
                                $9::text[], $10::smallint[], $11::bigint[], $12::float8[], $13::text[], $14, $15, $16, $17, $18)
            """, parameters)
        return result.int64(0, 0)
    }

    /// The five column arrays of `rows` (path, kind, int, double, string), as parameters.
    static func columns(_ rows: [LeafRow]) -> [PGValue] {
        var paths: [String?] = [], kinds: [String?] = [], ints: [String?] = [], doubles: [String?] = [], strings: [String?] = []
        for row in rows {
            switch row.value {
            case .string(let s): ints.append(nil); doubles.append(nil); strings.append(s)
            case .int(let i): ints.append(String(i)); doubles.append(nil); strings.append(nil)
            case .double(let d): ints.append(nil); doubles.append(PGArray.doubleText(d)); strings.append(nil)
            case .bool(let b): ints.append(b ? "1" : "0"); doubles.append(nil); strings.append(nil)
            case .null, .array, .object: continue
            }
            paths.append(row.path)
            kinds.append(String(row.kind.rawValue))
        }
        return [paths, kinds, ints, doubles, strings].map { .text(PGArray.literal($0)) }
    }
}

/// PostgreSQL array literals (`{"a","b",NULL}`), so one parameter carries many values.
enum PGArray {
    static func literal(_ items: [String?]) -> String {
        var out = "{"
        for (index, item) in items.enumerated() {
            if index > 0 { out += "," }
            guard let item else {
                out += "NULL"
                continue
            }
            out += "\""
            for scalar in item.unicodeScalars {
                if scalar == "\"" || scalar == "\\" { out += "\\" }
                out.unicodeScalars.append(scalar)
            }
            out += "\""
        }
        return out + "}"
    }

    /// A double as PostgreSQL reads it back exactly (Swift's shortest round-trip form).
    static func doubleText(_ value: Double) -> String {
        "\(value)"
    }

    static func literal(_ items: [String]) -> String {
        literal(items.map { Optional($0) })
    }
}
