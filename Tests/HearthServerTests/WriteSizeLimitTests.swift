import HearthStore
import Testing

/// Over REST, a write past `maxNodesPerWrite` is a 413 that says what to do.
@Suite struct WriteSizeLimitTests {
    static func leaves(_ count: Int) -> String {
        "{" + (0..<count).map { "\"k\($0)\":\($0)" }.joined(separator: ",") + "}"
    }

    @Test func writesAndReplacementsPastTheLimitAre413() async throws {
        var options = StoreOptions()
        options.maxNodesPerWrite = 10
        let harness = try RouterHarness(storeOptions: options)
        let tooMany = await harness.send("PUT", "/a.json", Self.leaves(11))
        #expect(tooMany.status == 413)
        #expect(tooMany.errorMessage == "Write too large: the data has more than 10 nodes; write it in parts of at most 10")
        #expect(await harness.send("GET", "/a.json").text == "null")
        #expect(await harness.send("PUT", "/a/p1.json", Self.leaves(10)).status == 200)
        #expect(await harness.send("POST", "/a.json", Self.leaves(10)).status == 200)
        let patch = await harness.send("PATCH", "/b.json", #"{"x": \#(Self.leaves(6)), "y": \#(Self.leaves(6))}"#)
        #expect(patch.status == 413)

        let delete = await harness.send("DELETE", "/a.json")
        #expect(delete.status == 413)
        #expect(delete.errorMessage == "Write too large: it would replace or delete more than 10 stored nodes; delete the children in parts first")
        #expect(await harness.send("DELETE", "/a/p1.json").status == 200)
        #expect(await harness.send("DELETE", "/a.json").status == 200)
    }
}
