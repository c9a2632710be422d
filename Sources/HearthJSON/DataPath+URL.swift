/// Parsing the path of a REST request URL (docs/protocol/rest.md §1.1).
extension DataPath {
    /// The suffix REST URLs carry on their last segment (`/users/a.json`, `/.json`).
    public static let jsonSuffix = ".json"

    /// Parses the raw, still percent-encoded path of a request URL (the part before `?`).
    ///
    /// Steps, in order (docs/protocol/rest.md §1.1):
    /// 1. strip one trailing `.json` (only from the end of the whole path, i.e. the last
    ///    segment; the suffix is optional here, requiring it is the HTTP layer's call);
    /// 2. split on `/` and ignore empty segments (`//a///b/` is `/a/b`; `/.json` is root);
    /// 3. percent-decode each segment (`%XX`, either case; `+` stays `+`). A malformed
    ///    escape or bytes that are not UTF-8 give `PathError.badEncoding`;
    /// 4. validate each decoded segment as a key, and the depth.
    ///
    /// Because splitting happens before decoding, `%2F` yields a key containing `/`, which
    /// is then rejected as an invalid key. Admin paths such as `/.settings/rules.json` are
    /// not data paths (`.settings` is not a valid key): route them before calling this.
    public init(urlPath: some StringProtocol) throws(PathError) {
        var raw = Substring(urlPath)
        if raw.hasSuffix(Self.jsonSuffix) { raw = raw.dropLast(Self.jsonSuffix.count) }

        var segments: [String] = []
        // One allocation for the array, not one per doubling (a path has few segments).
        segments.reserveCapacity(min(Self.maxSegments, raw.utf8.count { $0 == UInt8(ascii: "/") } + 1))
        for piece in raw.utf8.split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: true) {
            guard segments.count < Self.maxSegments else {
                throw .tooDeep(depth: raw.utf8.split(separator: UInt8(ascii: "/")).count)
            }
            let key = try Self.percentDecode(piece)
            try Self.validateKey(key)
            segments.append(key)
        }
        self.init(uncheckedSegments: segments)
    }

    /// Decodes `%XX` escapes in one URL path segment and checks the result is UTF-8.
    static func percentDecode(_ piece: Substring.UTF8View.SubSequence) throws(PathError) -> String {
        guard let decoded = PercentEncoding.decode(piece) else {
            throw .badEncoding(segment: String(decoding: piece, as: UTF8.self))
        }
        return decoded
    }
}

extension String {
    /// The string these bytes encode, or nil when they are not well-formed UTF-8.
    /// (`String(validating:as:)` needs macOS 15; this works everywhere.)
    init?(validatingUTF8Bytes bytes: some Collection<UInt8>) {
        // Decoding repairs ill-formed input with U+FFFD, so the result has the very same
        // bytes exactly when the input was well-formed (one pass and one copy, where the
        // scalar-by-scalar loop below cost ~1 % of the server's CPU on creates).
        let decoded = String(decoding: bytes, as: UTF8.self)
        if decoded.utf8.elementsEqual(bytes) {
            self = decoded
            return
        }
        var iterator = bytes.makeIterator()
        var decoder = UTF8()
        var scalars = String.UnicodeScalarView()
        loop: while true {
            switch decoder.decode(&iterator) {
            case .scalarValue(let scalar): scalars.append(scalar)
            case .emptyInput: break loop
            case .error: return nil
            }
        }
        self = String(scalars)
    }
}
