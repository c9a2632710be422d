import HearthJSON

/// Why a write was refused as too large (`StoreOptions.maxNodesPerWrite`); nothing of it
/// was written.
public enum WriteTooLarge: Error, Sendable, Equatable {
    /// The data written becomes more than `limit` stored nodes (leaves and priorities).
    case writes(limit: Int)
    /// The write replaces or deletes more than `limit` stored nodes.
    case replaces(limit: Int)
}

/// Counting a write's nodes, stopping as soon as the count passes the limit, so a huge
/// write costs no more to refuse than the limit does.
package enum WriteSize {
    /// The stored rows `value` becomes (as `LeafRow.flatten` makes them), counted up to
    /// `limit + 1`.
    package static func rows(in value: JSONValue, limit: Int) -> Int {
        var total = 0
        count(value, into: &total, limit: limit)
        return total
    }

    private static func count(_ value: JSONValue, into count: inout Int, limit: Int) {
        if count > limit { return }
        switch value {
        case .null: return
        case .bool, .int, .double, .string: count += 1
        case .object(let children):
            if children[".priority"] != nil { count += 1 }
            if children[".value"] != nil {
                count += 1
                return
            }
            for (key, child) in children where key != ".priority" {
                self.count(child, into: &count, limit: limit)
                if count > limit { return }
            }
        case .array(let items):
            for item in items {
                self.count(item, into: &count, limit: limit)
                if count > limit { return }
            }
        }
    }

    /// The rows of `operation`'s values, up to `limit + 1`.
    package static func rows(in operation: WriteOperation, limit: Int) -> Int {
        var total = 0
        for entry in operation.entries {
            guard let value = entry.value else { continue }
            total += rows(in: value, limit: limit - total)
            if total > limit { return total }
        }
        return total
    }
}
