#if canImport(Glibc)
import Glibc
#endif

/// Read access to the process environment.
struct Environment {
    subscript(name: String) -> String? {
        guard let value = getenv(name) else { return nil }
        let text = String(cString: value)
        return text.isEmpty ? nil : text
    }

    /// True for "1", "true" or "yes".
    func flag(_ name: String) -> Bool {
        guard let value = self[name]?.lowercased() else { return false }
        return ["1", "true", "yes"].contains(value)
    }
}

