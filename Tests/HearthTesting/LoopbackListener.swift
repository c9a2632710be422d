#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Synchronization

/// A TCP socket bound to 127.0.0.1 on a free port, or on `port` (listening when `listen`),
/// and the port.
public func bindLoopback(listen: Bool, port: Int = 0) throws -> (fd: Int32, port: Int) {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
    guard fd >= 0 else { throw LiveClientError("socket: errno \(errno)") }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = UInt16(port).bigEndian
    address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let bound = withUnsafeMutablePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer in
            bind(fd, pointer, length) == 0 && (!listen || Glibc.listen(fd, 64) == 0) && getsockname(fd, pointer, &length) == 0
        }
    }
    guard bound else {
        let code = errno
        close(fd)
        throw LiveClientError("bind/listen: errno \(code)")
    }
    return (fd, Int(UInt16(bigEndian: address.sin_port)))
}

/// Whether something accepts a TCP connection on 127.0.0.1:`port` now.
public func loopbackPortAccepts(_ port: Int) -> Bool {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
    guard fd >= 0 else { return false }
    defer { close(fd) }
    return connectToLoopback(fd, port: port) == 0
}

/// A loopback port nobody listens on, for as long as this is held: a socket bound to it
/// without `listen`, so a connection to it is refused, and no server of a test running
/// beside (binding port 0, in any process) can be given the port meanwhile. A port from
/// `freeLoopbackPort()` is free again at once, and a trigger pointed at it could reach
/// whatever binds it next: its "refused" attempts then wait on another test's listener, or
/// are answered 200 and delivered; posted to another test's Hearth server they become a
/// write there (a push under its root), numbered among that test's own.
///
/// The port lies below the kernel's ephemeral range (`bindBelowEphemeralRange`), so once
/// released for its listener, the seconds that listener takes to start (a Python Functions
/// Framework) leave it to that listener: no bind to port 0 and no outgoing connection can
/// be given it.
public final class RefusingPort: Sendable {
    public let port: Int
    private let fd: Mutex<Int32?>

    public init() throws {
        let (fd, port) = try bindBelowEphemeralRange()
        self.fd = Mutex(fd)
        self.port = port
    }

    /// Gives the port up, for a receiver that is to listen on it next.
    public func release() {
        if let fd = fd.withLock({ fd in defer { fd = nil }; return fd }) { close(fd) }
    }

    deinit { release() }
}

/// A port that was free a moment ago, for a program that cannot bind port 0 and report it,
/// started at once to bind it. (A port nobody is to listen on for a while is a
/// `RefusingPort`, released just before its listener starts.) It lies below the kernel's
/// ephemeral range (`bindBelowEphemeralRange`).
public func freeLoopbackPort() throws -> Int {
    let (fd, port) = try bindBelowEphemeralRange()
    close(fd)
    return port
}

/// A socket bound (not listening) to 127.0.0.1 on a random free port below the kernel's
/// ephemeral range (`ip_local_port_range`), where a bind to port 0 and the local end of an
/// outgoing connection never land: the servers of the tests running beside (all on port 0)
/// and their clients' connections cannot be given the port, before or after it is let go.
/// Only another caller drawing the same port at the same moment could (the bind then fails
/// and another is drawn). Without room below the range (fewer than
/// `minimumPortsBelowEphemeralRange` ports above `freePortFloor`), a port the kernel chooses.
public func bindBelowEphemeralRange() throws -> (fd: Int32, port: Int) {
    if let low = ephemeralPortRangeStart(), low - freePortFloor >= minimumPortsBelowEphemeralRange {
        for _ in 0..<64 {
            if let bound = try? bindLoopback(listen: false, port: Int.random(in: freePortFloor..<low)) { return bound }
        }
    }
    return try bindLoopback(listen: false)
}

/// The lowest port `freeLoopbackPort()` draws (the ports below are where services tend to
/// be configured).
public let freePortFloor = 10_000

/// The fewest ports between `freePortFloor` and the ephemeral range worth drawing from (with
/// fewer, two tests would draw the same port too often).
public let minimumPortsBelowEphemeralRange = 1_000

/// The first port of the kernel's ephemeral range, nil when it cannot be read.
public func ephemeralPortRangeStart() -> Int? {
    guard let text = try? String(contentsOfFile: "/proc/sys/net/ipv4/ip_local_port_range", encoding: .utf8) else { return nil }
    return text.split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == "\n" }).first.flatMap { Int($0) }
}

/// Whether process `pid` itself holds a socket listening on 127.0.0.1:`port` (or on every
/// IPv4 address at that port): the listening sockets are read from `/proc/net/tcp` and
/// their inodes looked for among `/proc/<pid>/fd`'s links. Unlike `loopbackPortAccepts`,
/// another process listening on the port (a server of a test running beside, given the
/// port after `freeLoopbackPort()` let it go) does not count.
public func processListens(_ pid: Int32, onLoopbackPort port: Int) -> Bool {
    guard let table = readWholeFile("/proc/net/tcp") else { return false }
    let portHex = String(format: "%04X", port)
    let accepted: Set<String> = ["0100007F:" + portHex, "00000000:" + portHex]
    // Columns: sl, local_address, rem_address, st (0A = LISTEN), ..., inode (the tenth).
    let inodes = Set(table.split(separator: "\n").dropFirst().compactMap { line -> String? in
        let fields = line.split(separator: " ")
        guard fields.count > 9, accepted.contains(String(fields[1])), fields[3] == "0A" else { return nil }
        return "socket:[\(fields[9])]"
    })
    guard !inodes.isEmpty, let descriptors = try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd") else { return false }
    return descriptors.contains { descriptor in
        (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(pid)/fd/\(descriptor)")).map(inodes.contains) ?? false
    }
}

/// A file's whole text, read until the end of file. Foundation's `String(contentsOfFile:)`
/// stops after the first read of a `/proc` file (its size reads as 0): it returned 27 of
/// `/proc/net/tcp`'s 802 lines with 800 sockets listening.
public func readWholeFile(_ path: String) -> String? {
    let fd = open(path, O_RDONLY | O_CLOEXEC)
    guard fd >= 0 else { return nil }
    defer { close(fd) }
    var bytes: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 65_536)
    while true {
        let count = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
        if count < 0 && errno == EINTR { continue }
        guard count >= 0 else { return nil }
        if count == 0 { return String(decoding: bytes, as: UTF8.self) }
        bytes.append(contentsOf: chunk[0..<count])
    }
}

/// A request as a `LoopbackListener` read it.
public struct ReceivedRequest: Sendable {
    public var method: String
    public var target: String
    public var headers: [(name: String, value: String)]
    public var body: [UInt8]

    public func header(_ name: String) -> String? {
        headers.first { $0.name.lowercased() == name.lowercased() }?.value
    }

    public var text: String { String(decoding: body, as: UTF8.self) }
}

/// A TCP listener on 127.0.0.1, port 0, for tests of clients: each accepted connection is
/// handed to `handle` on its own thread (the socket is closed when `handle` returns).
/// `stop()` closes the listening socket and waits for the accept thread.
public final class LoopbackListener: Sendable {
    public let port: Int
    private let fd: Int32
    private final class Flag: Sendable { let done = Mutex(false) }
    private let flag = Flag()
    private let finished = DispatchSemaphore(value: 0)

    public init(handle: @escaping @Sendable (LoopbackSocket) -> Void) throws {
        (fd, port) = try bindLoopback(listen: true)
        let (listening, flag, finished) = (fd, flag, finished)
        Thread.detachNewThread {
            while true {
                let client = accept(listening, nil, nil)
                if client < 0 {
                    if errno == EINTR || errno == ECONNABORTED { continue }
                    break
                }
                if flag.done.withLock({ $0 }) {
                    Glibc.close(client)
                    break
                }
                Thread.detachNewThread { handle(LoopbackSocket(adopting: client)) }
            }
            finished.signal()
        }
    }

    /// Stops accepting (connections being handled go on).
    public func stop() {
        guard !flag.done.withLock({ let was = $0; $0 = true; return was }) else { return }
        Glibc.shutdown(fd, Int32(SHUT_RDWR))
        finished.wait()
        Glibc.close(fd)
    }

    deinit { stop() }
}

extension LoopbackSocket {
    /// Reads one request: head and a `Content-Length` body. Nil when the peer closed first.
    public func readRequest() -> ReceivedRequest? {
        guard let head = read(until: Array("\r\n\r\n".utf8)) else { return nil }
        var lines = String(decoding: head, as: UTF8.self).split(separator: "\r\n", omittingEmptySubsequences: false).map(String.init)
        let requestLine = lines.removeFirst().split(separator: " ").map(String.init)
        guard requestLine.count == 3 else { return nil }
        let headers = lines.compactMap { line -> (name: String, value: String)? in
            guard let colon = line.firstIndex(of: ":") else { return nil }
            return (String(line[..<colon]), String(line[line.index(after: colon)...].drop { $0 == " " }))
        }
        var request = ReceivedRequest(method: requestLine[0], target: requestLine[1], headers: headers, body: [])
        let length = request.header("Content-Length").flatMap(Int.init) ?? 0
        guard let body = read(count: length) else { return nil }
        request.body = body
        return request
    }

    /// Answers with `status` and `body` (Content-Length framing).
    public func respond(_ status: Int, _ body: String = "", headers: [(String, String)] = []) throws {
        var text = "HTTP/1.1 \(status) X\r\nContent-Length: \(body.utf8.count)\r\n"
        for (name, value) in headers { text += "\(name): \(value)\r\n" }
        try send(text + "\r\n" + body)
    }
}

/// A server that accepts and never answers: each connection is held (unread, unanswered)
/// until `release()`, then closed; `accepted` counts them. `stop()` releases and stops.
public final class StalledListener: Sendable {
    private final class State: Sendable {
        let accepted = Mutex(0)
        let released = DispatchSemaphore(value: 0)
        let isReleased = Mutex(false)
    }
    private let state = State()
    private let listener: LoopbackListener

    public init() throws {
        let state = self.state
        listener = try LoopbackListener { _ in
            state.accepted.withLock { $0 += 1 }
            state.released.wait()
            state.released.signal()  // the next held connection goes too
        }
    }

    public var port: Int { listener.port }
    public var accepted: Int { state.accepted.withLock { $0 } }

    /// Closes every held connection (and any accepted later).
    public func release() {
        guard !state.isReleased.withLock({ let was = $0; $0 = true; return was }) else { return }
        state.released.signal()
    }

    public func stop() {
        release()
        listener.stop()
    }
}
