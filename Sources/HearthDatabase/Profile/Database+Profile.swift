import HearthJSON

extension Database {
    /// Starts a profiling window of `seconds` on this database (`Profiler.start`), paths
    /// collapsed by the running rules' wildcards.
    public func startProfile(seconds: Int) throws(Profiler.StartError) {
        let policy = self.policy
        try profiler.start(seconds: seconds) { policy.pattern(of: $0) }
    }

    /// `path`'s pattern under the running rules (`RuleSet.pattern(of:)`), for
    /// `Profiler.record(_:pattern:at:…)`.
    public func profilePattern(of path: DataPath) -> String {
        policy.pattern(of: path)
    }
}
