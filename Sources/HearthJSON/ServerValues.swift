/// Server values (docs/protocol/rest.md §1.5): `{".sv":"timestamp"}` and
/// `{".sv":{"increment":n}}` in a written value are placeholders that the writer resolves
/// at commit time, before the rules see the value (`newData` holds the resolved value).
public enum ServerValues {
    /// A placeholder, as `FirebaseTree.normalize` keeps it.
    public enum Placeholder: Sendable, Equatable {
        case timestamp
        case increment(JSONValue)
    }

    /// The placeholder `value` is, if it is one.
    public static func placeholder(_ value: JSONValue) -> Placeholder? {
        guard case .object(let members) = value, members.count == 1, let spec = members[".sv"] else { return nil }
        switch spec {
        case .string("timestamp"):
            return .timestamp
        case .object(let inner):
            guard inner.count == 1, let delta = inner["increment"] else { return nil }
            switch delta {
            case .int, .double: return .increment(delta)
            default: return nil
            }
        default:
            return nil
        }
    }

    /// True when `value` holds a placeholder anywhere.
    public static func contains(_ value: JSONValue) -> Bool {
        guard case .object(let members) = value else { return false }
        if placeholder(value) != nil { return true }
        return members.values.contains(where: contains)
    }

    /// `value` (written at `path`) with every placeholder replaced: a timestamp by `now`
    /// (ms since the epoch), an increment by the current number at its location plus the
    /// delta, or the delta when the current value is missing or not a number. Integer plus
    /// integer stays an integer unless it overflows 64 bits, then it is a double. An
    /// increment whose sum passes the largest double throws `TreeError.incrementOutOfRange`: the
    /// tree holds no infinity, and writing one would lose the number that was there.
    /// Errors `current` throws pass through.
    public static func resolve(
        _ value: JSONValue, at path: DataPath, now: Int64, current: (DataPath) throws -> JSONValue?
    ) throws -> JSONValue {
        if let placeholder = placeholder(value) {
            switch placeholder {
            case .timestamp:
                return .int(now)
            case .increment(let delta):
                let sum = add(try current(path), delta)
                if case .double(let d) = sum, !d.isFinite { throw TreeError.incrementOutOfRange(at: path) }
                return sum
            }
        }
        guard case .object(let members) = value else { return value }
        var resolved: [JSONKey: JSONValue] = [:]
        resolved.reserveCapacity(members.count)
        for (key, child) in members {
            resolved[key] = try resolve(child, at: DataPath(uncheckedSegments: path.segments + [key.string]), now: now, current: current)
        }
        return .object(resolved)
    }

    static func add(_ current: JSONValue?, _ delta: JSONValue) -> JSONValue {
        switch (current, delta) {
        case (.int(let a)?, .int(let b)):
            let (sum, overflow) = a.addingReportingOverflow(b)
            return overflow ? .double(Double(a) + Double(b)) : .int(sum)
        case (.int(let a)?, .double(let b)):
            return normalizedDouble(Double(a) + b)
        case (.double(let a)?, .int(let b)):
            return normalizedDouble(a + Double(b))
        case (.double(let a)?, .double(let b)):
            return normalizedDouble(a + b)
        default:
            return delta
        }
    }

    /// Integral doubles within ±2^53 are integers in the tree (docs/protocol/rest.md §1.7,
    /// as `normalize`).
    private static func normalizedDouble(_ d: Double) -> JSONValue {
        if d.isFinite, d.magnitude <= JSONWriter.maxIntegralDoubleWrittenAsInteger, d.rounded(.towardZero) == d {
            return .int(Int64(d))
        }
        return .double(d)
    }
}
