import Testing
@testable import HearthServer

/// `NamespaceName.named` reads a request's `Host` on the bytes for the common hosts that
/// name no namespace; every host must give what reading it in full gives.
@Suite struct NamespaceNameTests {
    /// The reading of a host without the fast path (its first version), as the oracle.
    static func fullReading(_ host: String) -> String? {
        let name = host.split(separator: ":", maxSplits: 1).first.map(String.init) ?? host
        let labels = name.split(separator: ".", omittingEmptySubsequences: false)
        guard labels.count >= 3, !labels.allSatisfy({ $0.allSatisfy(\.isNumber) }), !name.hasPrefix("[") else { return nil }
        return labels[0].lowercased()
    }

    @Test(arguments: [
        "127.0.0.1:8080", "127.0.0.1", "localhost", "localhost:9000", "[::1]:8080", "[::1]", "10.0.0.12",
        "db.example.com", "DB.Example.com:443", "my-db.hearth.example.org", "example.com", "a.b", "a.b.",
        "1.2.3", "1.2.x", "..", "...", ":8080", ":a.b.c", "", "١.٢.٣", "٣.b.c", "a.b.c:1:2", "0.0.0.0:0",
        "x.1.2", "1.2.3.4.5.6",
    ])
    func aHostNamesWhatReadingItInFullNames(host: String) {
        #expect(NamespaceName.named(query: nil, host: host)?.name == Self.fullReading(host))
        if NamespaceName.namesNoNamespace(host) { #expect(Self.fullReading(host) == nil) }
    }

    @Test func theCommonHostsAreDecidedOnTheBytes() {
        for host in ["127.0.0.1:8080", "localhost", "localhost:9000", "[::1]:8080", "10.0.0.12"] {
            #expect(NamespaceName.namesNoNamespace(host))
        }
        for host in ["db.example.com", "١.٢.٣", ":8080"] {
            #expect(!NamespaceName.namesNoNamespace(host))
        }
    }

    @Test func theQueryStillWins() {
        #expect(NamespaceName.named(query: "ns=other", host: "127.0.0.1:8080")?.name == "other")
        #expect(NamespaceName.named(query: "a=1&ns=x", host: "db.example.com")?.name == "x")
        #expect(NamespaceName.named(query: nil, host: "db.example.com")?.fromHost == true)
    }
}
