import Foundation
import HearthSystem
import HearthTesting
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The wrapper's calls on names in the file system and on whole files, which the store's,
/// the backups' and the command line's file code goes through: what each reports when the
/// name is there, when it is not, and when the path cannot be what the call needs.
@Suite struct SyscallPathsTests {
    @Test func makeDirectoryCreatesOnceAndSaysWhenTheNameWasTaken() throws {
        let dir = TemporaryDirectory()
        let path = dir.path + "/made"
        #expect(try Syscall.makeDirectory(path, mode: 0o700))
        let info = try #require(try Syscall.status(path))
        #expect(info.st_mode & S_IFMT == S_IFDIR)
        #expect(info.st_mode & 0o777 == 0o700)
        #expect(try !Syscall.makeDirectory(path, mode: 0o700))  // there already: false, no error
        try Data("x".utf8).write(to: URL(fileURLWithPath: dir.path + "/file"))
        #expect(try !Syscall.makeDirectory(dir.path + "/file", mode: 0o700))  // a file has the name
        let error = #expect(throws: SystemError.self) { _ = try Syscall.makeDirectory(dir.path + "/file/below", mode: 0o700) }
        #expect(error?.errno == ENOTDIR)
        #expect(error?.call == "mkdir")
    }

    @Test func removeFileSaysWhetherTheNameWasThere() throws {
        let dir = TemporaryDirectory()
        let path = dir.path + "/file"
        try Data("x".utf8).write(to: URL(fileURLWithPath: path))
        #expect(try Syscall.removeFile(path))
        #expect(!Syscall.exists(path))
        #expect(try !Syscall.removeFile(path))  // gone already: false, no error
        let error = #expect(throws: SystemError.self) { try Syscall.removeFile(dir.path) }  // a directory
        #expect(error?.errno == EISDIR)
    }

    @Test func renameReplacesAndLinkNeverDoes() throws {
        let dir = TemporaryDirectory()
        let (a, b, c) = (dir.path + "/a", dir.path + "/b", dir.path + "/c")
        try Data("first".utf8).write(to: URL(fileURLWithPath: a))
        try Data("second".utf8).write(to: URL(fileURLWithPath: b))
        try Syscall.link(a, to: c)
        #expect(try String(contentsOfFile: c, encoding: .utf8) == "first")
        let taken = #expect(throws: SystemError.self) { try Syscall.link(b, to: c) }
        #expect(taken?.errno == EEXIST)
        #expect(try String(contentsOfFile: c, encoding: .utf8) == "first")  // kept
        try Syscall.rename(b, to: c)
        #expect(try String(contentsOfFile: c, encoding: .utf8) == "second")
        #expect(!Syscall.exists(b))
        let missing = #expect(throws: SystemError.self) { try Syscall.rename(b, to: a) }
        #expect(missing?.errno == ENOENT)
    }

    @Test func statusIsNilWhereNothingHasTheNameAndLstatSeesALinkItself() throws {
        let dir = TemporaryDirectory()
        #expect(try Syscall.status(dir.path + "/missing") == nil)
        try Data("12345".utf8).write(to: URL(fileURLWithPath: dir.path + "/file"))
        #expect(try Syscall.status(dir.path + "/file")?.st_size == 5)
        #expect(try Syscall.status(dir.path + "/file/below") == nil)  // ENOTDIR: nothing there either
        try FileManager.default.createSymbolicLink(atPath: dir.path + "/dangling", withDestinationPath: dir.path + "/missing")
        #expect(try Syscall.status(dir.path + "/dangling") == nil)
        let link = try #require(try Syscall.status(dir.path + "/dangling", followingLinks: false))
        #expect(link.st_mode & S_IFMT == S_IFLNK)
        #expect(!Syscall.exists(dir.path + "/dangling"))  // access() follows the link
    }

    @Test func readSomeAndWriteBestEffortThroughAPipe() throws {
        var ends: [Int32] = [0, 0]
        #expect(pipe(&ends) == 0)
        defer { try? Syscall.close(ends[0]) }
        let message = Array("a log line\n".utf8)
        #expect(message.withUnsafeBytes { Syscall.writeBestEffort(ends[1], $0) })
        try Syscall.close(ends[1])
        var buffer = [UInt8](repeating: 0, count: 64)
        let count = try buffer.withUnsafeMutableBytes { try Syscall.readSome(ends[0], into: $0) }
        #expect(Array(buffer[0..<count]) == message)
        #expect(try buffer.withUnsafeMutableBytes { try Syscall.readSome(ends[0], into: $0) } == 0)  // the end
    }

    /// A write that cannot be made returns false: no trap, no error to handle. A closed
    /// descriptor is -1 here, never a number another test's file may hold by now.
    @Test func writeBestEffortGivesUpWithoutTrapping() throws {
        let line = Array("dropped\n".utf8)
        #expect(!line.withUnsafeBytes { Syscall.writeBestEffort(-1, $0) })  // EBADF
        #expect(!Syscall.isOpen(-1))
        var ends: [Int32] = [0, 0]
        #expect(pipe(&ends) == 0)
        try Syscall.close(ends[0])
        defer { try? Syscall.close(ends[1]) }
        #expect(Syscall.isOpen(ends[1]))
        Syscall.ignoreSIGPIPE()  // as the server does; the write then fails with EPIPE
        #expect(!line.withUnsafeBytes { Syscall.writeBestEffort(ends[1], $0) })
        #expect(Array<UInt8>().withUnsafeBytes { Syscall.writeBestEffort(-1, $0) })  // nothing to write
    }
}
