import HearthJSON

extension Change {
    /// The children of `location` this change may have changed, each once (by code units:
    /// `é` and `e\u{301}` are two); nil when it wrote `location` itself or one of its
    /// ancestors (a put there, or a patch entry there), which may have changed any child.
    /// A change elsewhere touches none. The PostgreSQL engine brings a query index built
    /// over several transactions up to date with the changes made meanwhile.
    package func touchedChildren(of location: DataPath) -> Set<JSONKey>? {
        var touched = Set<JSONKey>()
        let at = location.segments
        func add(_ written: [String]) -> Bool {
            let shared = min(written.count, at.count)
            for i in 0..<shared where !written[i].utf8.elementsEqual(at[i].utf8) { return true }  // elsewhere
            guard written.count > at.count else { return false }  // at or above the location
            touched.insert(JSONKey(written[at.count]))
            return true
        }
        if kind == .patch, case .object(let entries) = data {
            for entry in entries.keys {
                let relative = entry.string.split(separator: "/", omittingEmptySubsequences: true).map(String.init)
                guard add(path.segments + relative) else { return nil }
            }
            return touched
        }
        return add(path.segments) ? touched : nil
    }
}
