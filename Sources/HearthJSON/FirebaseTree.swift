/// Firebase's data model applied to JSON values (docs/protocol/rest.md §1.7, §1.8): what a
/// written value becomes in the tree, and how a stored value is shown to readers.
///
/// The tree holds only non-empty objects and leaves (string, number, boolean). Writing
/// `null`, `{}`, `[]`, or an object whose children all vanish, means "delete"; arrays are
/// stored as objects keyed `"0"`, `"1"`, ...; on read, integer-keyed objects that are dense
/// enough are shown as arrays again.
public enum FirebaseTree {
    /// The largest string, in UTF-8 bytes (docs/protocol/rest.md §1.7: 10 MB, js-sdk
    /// `MAX_LEAF_SIZE_`).
    public static let maxStringBytes = 10 * 1024 * 1024

    /// The value as the tree stores it when `value` is written at `path`, or nil when the
    /// write deletes the node.
    ///
    /// * `null`, `{}` and `[]` vanish; so does an object (or array) whose children all
    ///   vanish, recursively (docs/protocol/rest.md §1.8).
    /// * Arrays become objects keyed by index; `null` elements leave no key, so
    ///   `[1,null,3]` is stored as `{"0":1,"2":3}`.
    /// * Every object key is validated (`DataPath.validateKey`), including the keys of
    ///   `null` children, as js-sdk `validateFirebaseData` does; keys starting with `.`
    ///   go to `pseudoKey(_:_:)`.
    /// * Depth: every child's path must have at most `DataPath.maxSegments` segments, i.e.
    ///   be fewer than `DataPath.maxDepth` levels deep, counting `path`'s own segments.
    /// * Strings: at most `maxStringBytes` bytes. Numbers: an integral `.double` with
    ///   |v| ≤ 2^53 becomes `.int` (in JavaScript 5.0 and 5 are one number); NaN and
    ///   ±Infinity are rejected.
    public static func normalize(_ value: JSONValue, at path: DataPath) throws(TreeError) -> JSONValue? {
        var normalizer = Normalizer(keys: path.segments)
        return try normalizer.normalize(value)
    }

    /// A stored value as readers see it (docs/protocol/rest.md §1.8): recursively, an
    /// object whose keys are all canonical non-negative integers (`^(0|[1-9][0-9]*)$`) and
    /// whose largest key is less than twice its number of keys becomes an array, with
    /// `null` at missing indices (js-sdk `ChildrenNode.val`). Everything else is unchanged.
    /// (`format=export` must not call this.)
    public static func render(_ value: JSONValue) -> JSONValue {
        switch value {
        case .object(var members):
            // Priorities are shown only by `format=export` (docs/protocol/rest.md §1.5).
            if let leaf = members[".value"] { return leaf }
            members[".priority"] = nil
            if let length = arrayLength(members) {
                var elements = [JSONValue](repeating: .null, count: length)
                for (key, child) in members {
                    elements[canonicalIndex(key.string)!] = render(child)
                }
                return .array(elements)
            }
            return .object(members.mapValues(render))
        case .array(let elements):
            return .array(elements.map(render))
        case .null, .bool, .int, .double, .string:
            return value
        }
    }

    /// `value` without its priorities (`.priority` members, `{".value": v}` wrappers): what
    /// the rules, ETags and clients that do not ask for `format=export` see.
    public static func withoutPriorities(_ value: JSONValue) -> JSONValue {
        // Most values hold no priority: returned as they are, not rebuilt (every write's
        // rules check asks). The walk is made once, at the top.
        holdsPriorities(value) ? strippingPriorities(value) : value
    }

    private static func strippingPriorities(_ value: JSONValue) -> JSONValue {
        guard case .object(var members) = value else { return value }
        if let leaf = members[".value"] { return leaf }
        members[".priority"] = nil
        return .object(members.mapValues(strippingPriorities))
    }

    /// Whether an object in `value` (arrays are left as they are) has a `.priority` or a
    /// `.value` member: whether `withoutPriorities` changes it.
    static func holdsPriorities(_ value: JSONValue) -> Bool {
        guard case .object(let members) = value else { return false }
        if members[".priority"] != nil || members[".value"] != nil { return true }
        return members.values.contains(where: holdsPriorities)
    }

    /// The `shallow=true` view (docs/protocol/rest.md §1.3): an object becomes
    /// `{key: true, ...}`; a primitive (or null) is returned as itself. An array, which a
    /// normalised tree does not hold, is treated as its stored object form.
    public static func shallow(_ value: JSONValue) -> JSONValue {
        switch value {
        case .object(let members):
            return .object(members.mapValues { _ in .bool(true) })
        case .array(let elements):
            var members: [JSONKey: JSONValue] = [:]
            for (i, element) in elements.enumerated() where element != .null {
                members[String(i)] = .bool(true)
            }
            return .object(members)
        case .null, .bool, .int, .double, .string:
            return value
        }
    }

    // MARK: Arrays

    /// The array length `members` renders to, or nil when it stays an object.
    static func arrayLength(_ members: [JSONKey: JSONValue]) -> Int? {
        guard !members.isEmpty else { return nil }
        var maxIndex = 0
        for key in members.keys {
            guard let index = canonicalIndex(key.string) else { return nil }
            maxIndex = max(maxIndex, index)
        }
        return maxIndex < 2 * members.count ? maxIndex + 1 : nil
    }

    /// The value of a key matching `^(0|[1-9][0-9]*)$` (ASCII digits), or nil. Keys too
    /// long to be an index of any realistic array (over 15 digits) give `Int.max`, which
    /// fails the 2× test.
    static func canonicalIndex(_ key: String) -> Int? {
        canonicalIndex(utf8: key.utf8)
    }

    /// `canonicalIndex` of a key given as UTF-8 bytes.
    static func canonicalIndex<Bytes: Collection<UInt8>>(utf8: Bytes) -> Int? {
        guard let first = utf8.first, first &- UInt8(ascii: "0") < 10 else { return nil }
        if first == UInt8(ascii: "0") { return utf8.count == 1 ? 0 : nil }
        var value = 0
        var digits = 0
        for byte in utf8 {
            let digit = byte &- UInt8(ascii: "0")
            guard digit < 10 else { return nil }
            digits += 1
            if digits <= 15 { value = value * 10 + Int(digit) }
        }
        return digits <= 15 ? value : Int.max
    }
}

// MARK: - Normalisation walk

/// One `normalize` call: walks the value, keeping the current path's keys for depth
/// checks and error locations.
private struct Normalizer {
    /// Keys from the root to the node being normalised.
    var keys: [String]

    var here: DataPath { DataPath(uncheckedSegments: keys) }

    mutating func normalize(_ value: JSONValue) throws(TreeError) -> JSONValue? {
        switch value {
        case .null:
            return nil
        case .bool, .int:
            return value
        case .double(let d):
            guard d.isFinite else { throw .invalidNumber(at: here) }
            if d.magnitude <= JSONWriter.maxIntegralDoubleWrittenAsInteger, d.rounded(.towardZero) == d {
                return .int(Int64(d))
            }
            return value
        case .string(let s):
            let bytes = s.utf8.count
            guard bytes <= FirebaseTree.maxStringBytes else { throw .stringTooLong(bytes: bytes, at: here) }
            return value
        case .array(let elements):
            guard !elements.isEmpty else { return nil }
            try checkChildDepth()
            var members: [JSONKey: JSONValue] = [:]
            members.reserveCapacity(elements.count)
            for (index, element) in elements.enumerated() where element != .null {
                let key = String(index)
                keys.append(key)
                defer { keys.removeLast() }
                if let child = try normalize(element) { members[key] = child }
            }
            return members.isEmpty ? nil : .object(members)
        case .object(let children):
            guard !children.isEmpty else { return nil }
            if let spec = children[".sv"] {
                // A server value stands alone and resolves to a leaf at commit
                // (docs/protocol/rest.md §1.5).
                guard children.count == 1, ServerValues.placeholder(value) != nil else {
                    throw .invalidServerValue(under: here, detail: children.count == 1 ? JSONWriter.string(spec) : "\".sv\" must be the only key")
                }
                return value
            }
            if let wrapped = children[".value"] {
                // `{".value": v, ".priority": p}`: a leaf with a priority
                // (docs/protocol/rest.md §1.5).
                guard children.keys.allSatisfy({ $0 == ".value" || $0 == ".priority" }) else {
                    throw .invalidPriority(under: here, detail: "\".value\" may only stand beside \".priority\"")
                }
                guard let leaf = try normalize(wrapped) else { return nil }
                if case .object = leaf { throw .invalidPriority(under: here, detail: "\".value\" must be a string, number or boolean") }
                guard let priority = try priority(children[".priority"]) else { return leaf }
                return .object([".value": leaf, ".priority": priority])
            }
            try checkChildDepth()
            var members: [JSONKey: JSONValue] = [:]
            members.reserveCapacity(children.count)
            var nodePriority: JSONValue?
            for (jsonKey, child) in children {
                let key = jsonKey.string
                if key.utf8.first == UInt8(ascii: ".") {
                    if key == ".priority" {
                        nodePriority = try priority(child)
                        continue
                    }
                    try pseudoKey(key, child)
                    continue
                }
                if let problem = DataPath.keyProblem(key) {
                    throw .invalidKey(key: key, problem: problem, under: here)
                }
                keys.append(key)
                defer { keys.removeLast() }
                if let normalized = try normalize(child) { members[jsonKey] = normalized }
            }
            // A priority alone does not make a node exist (a node with no children does not).
            if members.isEmpty { return nil }
            if let nodePriority { members[".priority"] = nodePriority }
            return .object(members)
        }
    }

    /// A priority: a string, a finite number, or null (none) (docs/protocol/rest.md §1.5).
    private func priority(_ value: JSONValue?) throws(TreeError) -> JSONValue? {
        switch value {
        case nil, .null?: return nil
        case .string(let text)?:
            guard text.utf8.count <= DataPath.maxKeyBytes else { throw .invalidPriority(under: here, detail: "a string priority is at most \(DataPath.maxKeyBytes) bytes") }
            return .string(text)
        case .int?: return value
        case .double(let d)?:
            guard d.isFinite else { throw .invalidPriority(under: here, detail: "NaN and Infinity are not priorities") }
            if d.magnitude <= JSONWriter.maxIntegralDoubleWrittenAsInteger, d.rounded(.towardZero) == d { return .int(Int64(d)) }
            return value
        default:
            throw .invalidPriority(under: here, detail: "a priority must be a string, a number or null")
        }
    }

    /// Children of the current node would have `keys.count + 1` segments.
    private func checkChildDepth() throws(TreeError) {
        guard keys.count < DataPath.maxSegments else {
            throw .tooDeep(depth: keys.count + 1, under: here)
        }
    }

    /// Keys starting with `.` other than `.sv`, `.value` and `.priority` (handled above) are
    /// invalid keys.
    private func pseudoKey(_ key: String, _ value: JSONValue) throws(TreeError) {
        throw .invalidKey(key: key, problem: .forbiddenCharacter("."), under: here)
    }
}
