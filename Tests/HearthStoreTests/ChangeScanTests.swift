import HearthJSON
import HearthStore
import Testing

/// `ChangeScan.touches` on storage keys says what `DataPath.isPrefix` / `isAncestor` say
/// of the paths.
struct ChangeScanTests {
    @Test(arguments: [
        ("", "", true), ("", "users/a", true), ("users/a", "", true),
        ("users/a", "users/a", true),
        ("users", "users/a", true), ("users/a/favorites/f1", "users/a", true),
        ("users/ab", "users/a", false), ("users/a", "users/ab", false),
        ("users/a/x", "users/ab", false), ("users/b", "users/a", false),
        ("usersa", "users", false), ("users", "usersa", false),
        ("users/ü", "users/üb", false), ("users/ü/n", "users/ü", true),
        ("a/b/c", "a/b/c/d/e", true), ("a/b/c/d/e", "a/b/c", true), ("a/b/x", "a/b/c", false),
    ])
    func touchesIsPrefixEitherWay(changed: String, location: String, expected: Bool) throws {
        #expect(ChangeScan.touches(Array(changed.utf8), Array(location.utf8)) == expected)
        let a = try DataPath(string: "/" + changed), b = try DataPath(string: "/" + location)
        #expect((b.isPrefix(of: a) || a.isAncestor(of: b)) == expected, "the paths' own answer")
    }
}
