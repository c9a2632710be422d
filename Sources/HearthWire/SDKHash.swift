import COpenSSL
import HearthJSON

/// The hash the client SDKs compute over a node (docs/protocol/wire.md §4.4), bit for bit:
/// a transaction's `p` carries the hash of the value the client based it on, and the server
/// writes only if its own value hashes the same (`datastale` otherwise). A listen's `h` is
/// the same hash of what the client has cached.
///
/// The pre-image of a node, then `base64(SHA-1(UTF-8 bytes))`; an empty node hashes to "":
/// - leaf: `[priority part]` + `number|string|boolean` + `:` + the value's text, a number
///   as the 16 lowercase hex digits of its IEEE-754 double (integers too: JavaScript has
///   only doubles, so 2^53 + 1 hashes like 2^53);
/// - object: `[priority part]` then, per child in priority order (no priority first, then
///   numbers ascending, then strings ascending; ties in key order), `:key:childHash`,
///   skipping children that hash to "";
/// - priority part: `priority:` + `number:<hex>` or `string:<text>` + `:`.
///
/// Values come in export form, as the wire carries them: `.priority` members on objects,
/// `{".value": v, ".priority": p}` for a leaf with a priority; arrays are objects keyed
/// by index (Firebase has no arrays in storage).
public enum SDKHash {
    public static func hash(_ value: JSONValue) -> String {
        let image = preimage(value)
        return image.isEmpty ? "" : base64SHA1(Array(image.utf8))
    }

    /// The string that is hashed ("" for an empty node).
    static func preimage(_ value: JSONValue) -> String {
        switch value {
        case .null: return ""
        case .bool, .int, .double, .string: return leafImage(value, priority: nil)
        case .array(let items):
            var children: [JSONKey: JSONValue] = [:]
            for (index, item) in items.enumerated() { children[JSONKey(String(index))] = item }
            return objectImage(children)
        case .object(let members):
            if let leaf = members[".value"] {
                return leaf.isLeaf ? leafImage(leaf, priority: members[".priority"]) : preimage(leaf)
            }
            return objectImage(members)
        }
    }

    private static func leafImage(_ value: JSONValue, priority: JSONValue?) -> String {
        let text: String
        switch value {
        case .bool(let flag): text = "boolean:" + (flag ? "true" : "false")
        case .int(let number): text = "number:" + hex(Double(number))
        case .double(let number): text = "number:" + hex(number)
        case .string(let string): text = "string:" + string
        case .null, .array, .object: return ""
        }
        return priorityPart(priority) + text
    }

    private static func objectImage(_ members: [JSONKey: JSONValue]) -> String {
        var image = priorityPart(members[".priority"])
        var children: [(key: String, priority: JSONValue?, hash: String)] = []
        for (key, child) in members where key.string != ".priority" {
            let childHash = hash(child)
            guard !childHash.isEmpty else { continue }
            children.append((key.string, childPriority(child), childHash))
        }
        children.sort { a, b in
            let order = comparePriorities(a.priority, b.priority)
            return order != 0 ? order < 0 : FirebaseKeyOrder.less(a.key, b.key)
        }
        for child in children { image += ":" + child.key + ":" + child.hash }
        return image
    }

    private static func childPriority(_ child: JSONValue) -> JSONValue? {
        guard case .object(let members) = child, let priority = members[".priority"] else { return nil }
        switch priority {
        case .int, .double, .string: return priority
        default: return nil
        }
    }

    /// Firebase's priority order: none < numbers (ascending) < strings (code-unit order).
    private static func comparePriorities(_ a: JSONValue?, _ b: JSONValue?) -> Int {
        func rank(_ p: JSONValue?) -> Int {
            switch p {
            case .int?, .double?: return 1
            case .string?: return 2
            default: return 0
            }
        }
        let (ra, rb) = (rank(a), rank(b))
        if ra != rb { return ra < rb ? -1 : 1 }
        switch (a, b) {
        case (let x?, let y?) where ra == 1:
            let (dx, dy) = (number(x), number(y))
            return dx == dy ? 0 : dx < dy ? -1 : 1
        case (.string(let x)?, .string(let y)?):
            return FirebaseKeyOrder.compareUTF16(x, y)
        default:
            return 0
        }
    }

    private static func number(_ value: JSONValue) -> Double {
        switch value {
        case .int(let n): return Double(n)
        case .double(let n): return n
        default: return 0
        }
    }

    private static func priorityPart(_ priority: JSONValue?) -> String {
        switch priority {
        case .int(let n)?: return "priority:number:" + hex(Double(n)) + ":"
        case .double(let n)?: return "priority:number:" + hex(n) + ":"
        case .string(let s)?: return "priority:string:" + s + ":"
        default: return ""
        }
    }

    /// The double's IEEE-754 binary64 encoding, big-endian, as 16 lowercase hex digits.
    static func hex(_ number: Double) -> String {
        let bits = String(number.bitPattern, radix: 16)
        return String(repeating: "0", count: 16 - bits.count) + bits
    }

    static func base64SHA1(_ bytes: [UInt8]) -> String {
        var digest = [UInt8](repeating: 0, count: 20)
        var length: UInt32 = 0
        let hashed = bytes.withUnsafeBytes { EVP_Digest($0.baseAddress, $0.count, &digest, &length, EVP_sha1(), nil) }
        precondition(hashed == 1 && length == 20, "libcrypto SHA-1 failed")
        var encoded = [UInt8](repeating: 0, count: 29)
        let written = EVP_EncodeBlock(&encoded, digest, 20)
        return String(decoding: encoded[0..<Int(written)], as: UTF8.self)
    }
}
