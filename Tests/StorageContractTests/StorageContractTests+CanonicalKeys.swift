import HearthJSON
import HearthStore
import Testing

/// Keys are compared by code units (docs/protocol/rest.md §1.3): `é` (U+00E9) and
/// `e\u{301}` (e and a combining accent), equal as Swift strings, are two keys, and a
/// write to one never leaves or removes the other's rows.
extension StorageContractTests {
    @Test(arguments: ContractEngine.all)
    func canonicallyEqualKeysAreTwoNodes(engine: ContractEngine) throws {
        let place = try engine.makePlace()
        let store = try engine.open(place.address, EngineHooks())
        defer { store.close(); _ = place }
        func at(_ segments: String...) -> DataPath { DataPath(uncheckedSegments: segments) }
        func read(_ path: DataPath) throws -> JSONValue { try store.readSync { try $0.value(at: path) } }

        // A leaf at one spelling; a write below the other; then a write below the first:
        // its leaf must go.
        try store.writeSync(.set(WriteEntry(path: at("list", "e\u{301}"), value: 1)), check: nil)
        try store.writeSync(.set(WriteEntry(path: at("list", "\u{E9}", "x"), value: 1)), check: nil)
        try store.writeSync(.set(WriteEntry(path: at("list", "e\u{301}", "x"), value: "v")), check: nil)
        #expect(try read(at("list", "e\u{301}")) == ["x": "v"])
        #expect(try read(at("list", "\u{E9}")) == ["x": 1])
        let whole = try read(at("list"))
        #expect(whole.objectValue?.count == 2)
        #expect(whole.objectValue?[JSONKey("e\u{301}")] == ["x": "v"])

        // Both spellings below one multi-path update, one of them a leaf until then.
        try store.writeSync(.set(WriteEntry(path: at("m", "e\u{301}"), value: 1)), check: nil)
        try store.writeSync(.update(base: at("m"), entries: [
            WriteEntry(path: at("m", "\u{E9}", "x"), value: 2),
            WriteEntry(path: at("m", "e\u{301}", "y"), value: 3),
        ]), check: nil)
        #expect(try read(at("m", "e\u{301}")) == ["y": 3])
        #expect(try read(at("m", "\u{E9}")) == ["x": 2])
    }
}
