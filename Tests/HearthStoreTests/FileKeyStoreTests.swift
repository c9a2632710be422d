import Foundation
import HearthTesting
import Testing
@testable import HearthSQLite

/// The SQLite engine's signing-key files: written whole (temporary name, sync, rename),
/// read back, private to the owner, and refused when they cannot be what a key file is.
@Suite struct FileKeyStoreTests {
    @Test func keysAreWrittenWholeAndReadBack() throws {
        let dir = TemporaryDirectory()
        let store = FileKeyStore(directory: dir.path + "/keys")
        #expect(try store.load() == nil)  // nothing written yet: no `current`
        try store.add(kid: "k1", privateKey: "first-key")
        try store.add(kid: "k2", privateKey: "second-key\n")
        let loaded = try #require(try store.load())
        #expect(loaded.current == "k2")
        #expect(loaded.keys == ["k1": "first-key", "k2": "second-key"])
        #expect(store.contains(kid: "k1") && !store.contains(kid: "k3"))
        let names = try FileManager.default.contentsOfDirectory(atPath: dir.path + "/keys").sorted()
        #expect(names == ["current", "k1.key", "k2.key"])  // no temporary file left behind
        for name in names {
            let mode = try FileManager.default.attributesOfItem(atPath: dir.path + "/keys/" + name)[.posixPermissions] as? Int
            #expect(mode == 0o600, "\(name)")
        }
    }

    @Test func aKeyFileLargerThanTheLimitIsRefused() throws {
        let dir = TemporaryDirectory()
        let store = FileKeyStore(directory: dir.path)
        try store.add(kid: "k1", privateKey: "key")
        try Data(repeating: UInt8(ascii: "a"), count: FileKeyStore.maxFileBytes).write(to: URL(fileURLWithPath: dir.path + "/k1.key"))
        #expect(try store.load()?.keys["k1"]?.count == FileKeyStore.maxFileBytes)  // at the limit: read
        try Data(repeating: UInt8(ascii: "a"), count: FileKeyStore.maxFileBytes + 1).write(to: URL(fileURLWithPath: dir.path + "/k1.key"))
        #expect(throws: FileKeyStore.Failure.self) { try store.load() }  // one byte past it
    }

    @Test func aFileThatCannotBeCreatedIsAnErrorAndLeavesNothing() throws {
        let dir = TemporaryDirectory()
        let notADirectory = dir.path + "/file"
        try Data("x".utf8).write(to: URL(fileURLWithPath: notADirectory))
        let error = #expect(throws: FileKeyStore.Failure.self) {
            try FileKeyStore.write("key", to: notADirectory + "/current")
        }
        #expect(error?.description.contains("errno \(ENOTDIR)") == true)
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.path) == ["file"])
    }
}
