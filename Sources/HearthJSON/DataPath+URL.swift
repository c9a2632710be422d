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
        var bytes = Substring(urlPath).utf8
        // By bytes: `.json` is ASCII, and a segment's bytes are what is decoded below.
        if bytes.count >= Self.jsonSuffix.utf8.count, bytes.suffix(Self.jsonSuffix.utf8.count).elementsEqual(Self.jsonSuffix.utf8) {
            bytes = bytes.dropLast(Self.jsonSuffix.utf8.count)
        }
        let slash = UInt8(ascii: "/")
        var segments: [String] = []
        // One allocation for the array, not one per doubling (a path has few segments).
        segments.reserveCapacity(min(Self.maxSegments, bytes.count { $0 == slash } + 1))
        // Each segment between slashes in one pass, with no array of the pieces first.
        var start = bytes.startIndex
        while start < bytes.endIndex {
            let end = bytes[start...].firstIndex(of: slash) ?? bytes.endIndex
            if start < end {
                guard segments.count < Self.maxSegments else {
                    throw .tooDeep(depth: bytes.split(separator: slash).count)
                }
                let key = try Self.percentDecode(bytes[start..<end])
                try Self.validateKey(key)
                segments.append(key)
            }
            start = end == bytes.endIndex ? end : bytes.index(after: end)
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
