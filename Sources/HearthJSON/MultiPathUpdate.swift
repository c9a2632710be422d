/// Parsing a PATCH body into the writes it stands for (docs/protocol/rest.md §1.2, "PATCH
/// multi-path").
///
/// `{"users/bob/name":"Bob","users/alice/city":null}` PATCHed at `/` means: set
/// `/users/bob/name` to `"Bob"` and delete `/users/alice/city`, atomically. A plain
/// `{"a":1}` is the one-segment case: children not named are kept.
public enum MultiPathUpdate {
    /// The writes in `body`, PATCHed at `base`, in path order (`DataPath` `<`). A nil
    /// value deletes.
    ///
    /// * `body` must be an object; an empty object is a valid no-op (no writes).
    /// * Each key is a slash path relative to `base` (`DataPath(string:)`): empty segments
    ///   are ignored, as in js-sdk `Path` and in URLs (`"a//b/"` is `a/b`), but a key
    ///   with no segments at all (`""`, `"/"`) is rejected, since it would replace `base`
    ///   itself, which is PUT's job. Each segment must be a valid key and `base` + key
    ///   must not be too deep.
    /// * Each value is normalised at its full path (`FirebaseTree.normalize`).
    /// * No path may equal or be an ancestor of another (js-sdk
    ///   `validateFirebaseMergePaths`); `"a"` with `"a/b"`, or `"a/b"` with `"a//b"`,
    ///   is rejected.
    public static func parse(base: DataPath, body: JSONValue) throws(UpdateError) -> [(path: DataPath, value: JSONValue?)] {
        guard case .object(let members) = body else { throw .notAnObject }

        var writes: [(path: DataPath, value: JSONValue?)] = []
        writes.reserveCapacity(members.count)
        for (jsonKey, value) in members {
            let key = jsonKey.string
            let relative: DataPath
            do throws(PathError) {
                relative = try DataPath(string: key)
            } catch {
                throw .invalidPath(key: key, error)
            }
            guard !relative.isRoot else { throw .emptyPath(key: key) }
            let path: DataPath
            do throws(PathError) {
                path = try base.appending(relative)
            } catch {
                throw .invalidPath(key: key, error)
            }
            do throws(TreeError) {
                writes.append((path, try FirebaseTree.normalize(value, at: path)))
            } catch {
                throw .invalidValue(key: key, error)
            }
        }

        // Sorted, an ancestor comes right before its descendants, so checking
        // neighbours finds every overlap (as js-sdk does).
        writes.sort { $0.path < $1.path }
        for (previous, next) in zip(writes, writes.dropFirst()) where previous.path.isPrefix(of: next.path) {
            throw .overlappingPaths(previous.path, next.path)
        }
        return writes
    }
}

/// Why a PATCH body was rejected.
public enum UpdateError: Error, Sendable, Hashable {
    /// The body is not a JSON object.
    case notAnObject
    /// A key has no segments (`""` or only slashes).
    case emptyPath(key: String)
    /// A key is not a valid relative path, or is too deep below the base.
    case invalidPath(key: String, PathError)
    /// A value cannot be written (bad key inside it, too deep, string too long, ...).
    case invalidValue(key: String, TreeError)
    /// The first path equals or is an ancestor of the second.
    case overlappingPaths(DataPath, DataPath)
}

extension UpdateError: CustomStringConvertible {
    public var description: String {
        switch self {
        case .notAnObject:
            return "Invalid data; a multi-path update must be a JSON object"
        case .emptyPath(let key):
            return "Invalid path: update key \"\(PathError.excerpt(key))\" names no child"
        case .invalidPath(_, let error):
            return error.description
        case .invalidValue(_, let error):
            return error.description
        case .overlappingPaths(let a, let b):
            if a == b {
                return "Invalid data; path \(PathError.excerpt(a.description)) is written more than once"
            }
            return "Invalid data; path \(PathError.excerpt(a.description)) is an ancestor of \(PathError.excerpt(b.description))"
        }
    }
}
