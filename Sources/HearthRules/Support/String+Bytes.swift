#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

extension String {
    /// Byte-for-byte equality of the UTF-8 forms. Swift's `==` treats canonically
    /// equivalent strings ("é" and "e\u{301}") as equal; Firebase keys, uids and rule
    /// strings are compared exactly, so look-alikes never match (a rule `auth.uid == $uid`
    /// must not accept another user's key spelled differently).
    @inline(__always)
    func hasSameBytes(as other: String) -> Bool {
        let count = utf8.count
        guard count == other.utf8.count else { return false }
        if count == 0 { return true }
        var left = self
        var right = other
        return left.withUTF8 { leftBytes in
            right.withUTF8 { rightBytes in
                memcmp(leftBytes.baseAddress!, rightBytes.baseAddress!, count) == 0
            }
        }
    }
}
