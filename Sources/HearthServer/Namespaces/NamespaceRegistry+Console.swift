/// What the admin console reads of the namespaces: it picks among those open, by name, and
/// never creates one (a name not served is the console's 404, whatever the server's mode).
extension NamespaceRegistry {
    /// The open namespace `name` names: the default for its own name and the names it
    /// answers to, another by its name; nil for any other (nothing is created).
    func namespace(named name: String) -> Namespace? {
        if name == primary.name || defaultNames.contains(name) { return primary }
        return extras.first { $0.name == name }
    }
}
