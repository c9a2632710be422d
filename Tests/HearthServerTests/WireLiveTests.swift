import Foundation
import HearthJSON
@testable import HearthServer
import HearthAccounts
import HearthHTTP
import HearthStore
import HearthStreams
import HearthTesting
import Logging
import Testing

/// The live tier of the wire protocol: an in-process `HearthService` on 127.0.0.1 port 0,
/// driven by our own protocol client (`EndToEndTests/Python/wire_client.py`, the
/// `websockets` package in the test virtualenv that scripts/test.sh sets up).
@Suite struct WireLiveTests {
    static let rules = ReferenceRules.withOpenSubtree

    /// Runs one mode of the client (`script` in EndToEndTests/Python) against `port`; its
    /// exit status and output.
    static func client(_ mode: String, port: Int, script name: String = "wire_client.py") throws -> (status: Int32, output: String) {
        let python = try #require(ProcessInfo.processInfo.environment["HEARTH_PYTHON"], "run scripts/test.sh (HEARTH_PYTHON not set)")
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("../EndToEndTests/Python/\(name)").standardized.path
        let process = ChildProcess()
        process.executableURL = URL(fileURLWithPath: python)
        process.arguments = [script, mode, String(port)]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()  // the client bounds its own waits
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: data, as: UTF8.self))
    }

    @Test(arguments: ["handshake", "listen_write", "query", "ondisconnect", "burst", "bad_paths", "refusals"])
    func theProtocolAgainstAnInProcessServer(mode: String) async throws {
        let server = try LiveServer(rules: Self.rules)
        let result = try Self.client(mode, port: server.port)
        await server.stop()
        #expect(result.status == 0, "\(mode):\n\(result.output)")
        #expect(result.output.hasSuffix("done\n"))
        #expect(result.output.contains("ok "))
    }

    /// Compound hashes: a client re-listening with `ch` (compound_client.py,
    /// hashing its cache as the iOS SDK does) gets nothing when its cache is current, and
    /// one `rm` with only the ranges that changed otherwise, which turns its cache into
    /// the server's value.
    @Test func aReListenWithACompoundHashGetsOnlyTheChangedRanges() async throws {
        let server = try LiveServer(rules: Self.rules)
        let result = try Self.client("compound", port: server.port, script: "compound_client.py")
        await server.stop()
        #expect(result.status == 0, "\(result.output)")
        #expect(result.output.hasSuffix("done\n"))
    }

    /// A listen whose `ch` cuts all fall under one child: with `CompoundHash.maxCutPaths`
    /// cuts it still gets one correct `rm`, with one more the whole value (`d`); another
    /// client's push written after each listen was sent still arrives.
    @Test func cutsUnderOneChildGetRangesOrTheWholeValueAndOthersStillGetPushes() async throws {
        let server = try LiveServer(rules: Self.rules)
        let result = try Self.client("cuts", port: server.port, script: "compound_client.py")
        await server.stop()
        #expect(result.status == 0, "\(result.output)")
        #expect(result.output.contains("ok 1025 cuts (past the bound) get the whole value"), "\(result.output)")
        #expect(result.output.hasSuffix("done\n"))
    }

    /// An identity that lapses on an open connection: once the client has
    /// listened, written and registered an onDisconnect operation, its user is revoked,
    /// disabled or deleted (as `hearth users` would, through the accounts); every later
    /// request on the same socket is judged signed out (`ac`, the listen cancelled, writes,
    /// reads and registrations refused) and the earlier onDisconnect operation does not
    /// run. The user status is read on every request here (`userStatusCacheSeconds` 0);
    /// by default REST and the socket both see a change within that bound.
    @Test(arguments: ["revoke", "disable", "delete"])
    func anIdentityThatLapsesIsNotUsableOnItsSocket(change: String) async throws {
        let server = try LiveServer(rules: Self.rules) { $0.auth.userStatusCacheSeconds = 0 }
        let location = try server.service.configuration.storeLocation()
        let driver = try InteractiveDriver(mode: "lapse", port: server.port)
        let ready = try #require(driver.readLine(), "\(driver.output)")
        let uid = String(try #require(ready.split(separator: " ").last, "\(driver.output)"))
        try #require(ready == "ready \(uid)", "\(driver.output)")
        let store = try Engines.open(location)
        let accounts = AccountService(accounts: store.accountStore, keys: try KeyRing(store: store.signingKeys), settings: AuthSettings())
        switch change {
        case "revoke": try accounts.revokeSessions(uid: uid)
        case "disable":
            var changes = AccountService.Changes()
            changes.disabled = true
            _ = try accounts.update(uid: uid, changes)
        default: try accounts.delete(uid: uid)
        }
        store.close()
        driver.send("go\n")
        let (status, output) = driver.finish()
        await server.stop()
        #expect(status == 0, "\(change):\n\(output)")
        #expect(output.hasSuffix("done\n"), "\(output)")
        #expect(output.contains("ok the onDisconnect registered before the lapse did not run"), "\(output)")
    }

    /// A listen on a value larger than a session's reader bound
    /// (`WebSocketLimits.maxBufferedBytes`, 1 MiB) gets it whole, and so does the push of
    /// another such value to it: a message's chunks go out as one unit, which the bound
    /// does not cut. Chunk by chunk, those past the bound closed the session with 1008
    /// before the client could read them, every time; an SDK reconnects, listens again and
    /// is closed again.
    @Test func aListenOnAValueLargerThanTheReaderBoundGetsItWholeAndItsPushesToo() async throws {
        let server = try LiveServer(rules: Self.rules)
        // 20,000 favourites, about 9 MB of JSON: 8 times the bound, and more than the
        // kernel's buffers take for a client that reads nothing while it is pushed
        // (the server's send buffer grows to 4 MiB at most here, the client's receive
        // buffer is held at 64 KiB).
        func favourites(note: String) -> JSONValue {
            var favourites: [JSONKey: JSONValue] = [:]
            for i in 0..<20_000 {
                favourites[JSONKey("-Nfav\(100_000 + i)")] = .object([
                    "name": .string("Place \(i)"), "note": .string(note + String(repeating: "n", count: 400)),
                    "createdAt": .int(1_700_000_000_000 + Int64(i))])
            }
            return .object(favourites)
        }
        func put(_ value: JSONValue) throws -> Int {
            let body = String(decoding: JSONWriter.write(value, style: .compact), as: UTF8.self)
            #expect(body.utf8.count > 8 * WebSocketLimits.defaultMaxBufferedBytes)
            return try server.request("PUT", "/open/favourites.json?print=silent", body).status
        }
        let first = favourites(note: "first ")
        #expect(try put(first) == 204)
        let client = try WireTestClient(port: server.port, receiveBuffer: 64 * 1024)
        let answer = try client.request("q", .object(["p": .string("/open/favourites"), "h": .string("")]))
        #expect(answer.objectValue?["s"] == .string("ok"))
        #expect(client.pushes.count == 1)
        #expect(client.pushes.first?.objectValue?["d"] == first)
        // The fan-out's push of a new value of the same size, to the listening session.
        let second = favourites(note: "second ")
        #expect(try put(second) == 204)
        try client.waitForPushes(2)
        #expect(client.pushes.last?.objectValue?["d"] == second)
        await server.stop()
    }

    /// A failed `auth` does not leave the previous identity in force.
    @Test func aFailedAuthSignsTheConnectionOut() async throws {
        let server = try LiveServer(rules: Self.rules)
        let result = try Self.client("failed_auth", port: server.port)
        await server.stop()
        #expect(result.status == 0, "\(result.output)")
        #expect(result.output.hasSuffix("done\n"))
    }

    /// A transaction's hash is no oracle: on a location the caller may write but
    /// not read, `p` with `h` is refused whatever the hash, and nothing is written.
    @Test func aHashOnDataTheCallerCannotReadIsRefusedWithoutComparing() async throws {
        let rules = #"{"rules": {"drop": {"$k": {".write": "auth != null"}}}}"#
        let server = try LiveServer(rules: rules)
        let result = try Self.client("oracle", port: server.port)
        #expect(result.status == 0, "\(result.output)")
        #expect(result.output.hasSuffix("done\n"))
        let location = try server.service.configuration.storeLocation()
        await server.stop()
        let store = try Engines.open(location)
        defer { store.close() }
        #expect(try store.readSync { try $0.value(at: DataPath(string: "/drop")) } == .object(["k": .string("secret")]))
    }

    /// Incomplete messages count against the address's share of held input:
    /// fragments without FIN across sockets, then wire chunks.
    @Test func partialMessagesAcrossSocketsPassTheAddressShare() async throws {
        let logs = CapturedLogs()
        let server = try LiveServer(rules: Self.rules, logger: Logger(label: "t", factory: logs.handler)) { configuration in
            configuration.limits.maxIncompleteBytesPerAddress = 1 << 20
        }
        let result = try Self.client("partials", port: server.port)
        await server.stop()
        #expect(result.status == 0, "\(result.output)")
        #expect(result.output.hasSuffix("done\n"))
        // Each policy close is logged with the address and the reason.
        let closes = logs.lines.withLock { $0.map(\.message) }.filter { $0.contains("closed 127.0.0.1 with 1008: Too much incomplete input") }
        #expect(closes.count == 2, "\(logs.all)")
        #expect(logs.all.contains("wire: closed 127.0.0.1 with 1009: Message announced in more than 1025 chunks"))
    }

    /// One connection cannot take its address's whole stream budget:
    /// its listens stop at `WireSessionLimits.connectionsToFillAnAddress`'s share.
    @Test func oneConnectionLeavesItsAddressRoomForNeighbours() async throws {
        let server = try LiveServer(rules: Self.rules) { configuration in
            configuration.streams.maxStreamsPerAddress = 8
        }
        let result = try Self.client("neighbours", port: server.port)
        await server.stop()
        #expect(result.status == 0, "\(result.output)")
        #expect(result.output.hasSuffix("done\n"))
        #expect(WireSessionLimits.defaultMaxListens * WireSessionLimits.connectionsToFillAnAddress <= StreamOptions.defaultMaxStreamsPerAddress)
        #expect(WireSessionLimits().fitted(toStreamsPerAddress: 8).maxListens == 2)
    }

    /// A node that missed changes starts its streams over (`startStreamsOver`, what the
    /// change feed's gap does on PostgreSQL): a wire-protocol connection with a listen is
    /// closed with 1001, and the client listens again and gets the whole value.
    @Test func startingStreamsOverClosesWireListensSoClientsListenAgain() async throws {
        let server = try LiveServer(rules: Self.rules)
        let python = try #require(ProcessInfo.processInfo.environment["HEARTH_PYTHON"], "run scripts/test.sh (HEARTH_PYTHON not set)")
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("../EndToEndTests/Python/wire_client.py").standardized.path
        let process = ChildProcess()
        process.executableURL = URL(fileURLWithPath: python)
        process.arguments = [script, "start_over", String(server.port)]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        try process.run()
        // Read what the client prints until it listens (it bounds its own waits and exits).
        var text = ""
        while !text.contains("ok listening\n") {
            let chunk = output.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            text += String(decoding: chunk, as: UTF8.self)
        }
        server.service.startStreamsOver()
        text += String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        await server.stop()
        #expect(process.terminationStatus == 0, "\(text)")
        #expect(text.contains("ok closed as going away\n") && text.hasSuffix("done\n"), "\(text)")
    }

    /// A client that sends requests faster than the database takes them: past
    /// `maxWaitingRequestBytes` waiting, the connection stops reading instead of holding
    /// them (it held every one, parsed, before), and every request is still answered.
    @Test func requestsFasterThanTheDatabaseTakesThemPauseTheConnection() async throws {
        let server = try LiveServer(rules: Self.rules) { configuration in
            configuration.wire.maxWaitingRequestBytes = 64 * 1024
        }
        let result = try Self.client("backlog", port: server.port)
        await server.stop()
        #expect(result.status == 0, "\(result.output)")
        #expect(result.output.hasSuffix("done\n"))
    }

    /// onDisconnect operations are bounded by their bytes, per connection and per address
    /// (a connection could queue 100 of the largest messages, kept parsed, before)
    /// (`ondisconnect_bytes`); an operation's bytes count its registrant's auth, which its
    /// record stores beside it, as an ID token's claims can be larger than the operation
    /// (`ondisconnect_auth_bytes`, with no bound per address below the default).
    @Test(arguments: ["ondisconnect_bytes", "ondisconnect_auth_bytes"])
    func onDisconnectOperationsPastTheirBytesAreRefused(mode: String) async throws {
        let server = try LiveServer(rules: Self.rules) { configuration in
            configuration.wire.maxOnDisconnectBytes = 1_000
            if mode == "ondisconnect_bytes" { configuration.wire.maxOnDisconnectBytesPerAddress = 1_500 }
        }
        let result = try Self.client(mode, port: server.port)
        let budget = server.service.onDisconnectBudget
        await server.stop()
        #expect(result.status == 0, "\(result.output)")
        #expect(result.output.hasSuffix("done\n"))
        #expect(budget.heldInAll == 0)
    }

    /// Every connection on one I/O queue, so a session's queue and the queue that handles
    /// the reconnecting upgrade (`ls`) are the same one: ending the old session must not
    /// wait for that queue (it did, and hung, while it was a `sync`). The onDisconnect
    /// writes and the limits run there too.
    @Test(arguments: ["reconnect", "ondisconnect", "limits", "burst"])
    func sessionsThatShareOneIOQueue(mode: String) async throws {
        let server = try LiveServer(rules: Self.rules) { configuration in
            configuration.ioQueueCount = 1
            // As WireProtocolEndToEndTests sets them for "limits".
            configuration.wire.maxListens = 2
            configuration.wire.maxOnDisconnect = 2
            configuration.wire.maxBadMessages = 3
            configuration.wire.maxAuthFailures = 2
            configuration.wire.maxPendingRequests = 4
        }
        let result = try Self.client(mode, port: server.port)
        await server.stop()
        #expect(result.status == 0, "\(mode):\n\(result.output)")
        #expect(result.output.hasSuffix("done\n"))
    }
}

/// `wire_client.py` in a mode that talks back: lines read from its output as they come,
/// lines written to its input. The client bounds each of its own waits.
final class InteractiveDriver {
    private let process = ChildProcess()
    private let input = Pipe()
    private let outputPipe = Pipe()
    private var buffer: [UInt8] = []
    private(set) var output: String = ""

    init(mode: String, port: Int, script name: String = "wire_client.py") throws {
        let python = try #require(ProcessInfo.processInfo.environment["HEARTH_PYTHON"], "run scripts/test.sh (HEARTH_PYTHON not set)")
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("../EndToEndTests/Python/\(name)").standardized.path
        process.executableURL = URL(fileURLWithPath: python)
        process.arguments = [script, mode, String(port)]
        process.standardInput = input
        process.standardOutput = outputPipe
        process.standardError = outputPipe
        try process.run()
    }

    /// The next line the client prints that is not an `ok` check line; nil at its end.
    func readLine() -> String? {
        while true {
            if let newline = buffer.firstIndex(of: UInt8(ascii: "\n")) {
                let line = String(decoding: buffer[..<newline], as: UTF8.self)
                buffer.removeSubrange(...newline)
                if !line.hasPrefix("ok ") { return line }
                continue
            }
            let data = outputPipe.fileHandleForReading.availableData
            if data.isEmpty { return nil }
            buffer += data
            output += String(decoding: data, as: UTF8.self)
        }
    }

    func send(_ text: String) {
        input.fileHandleForWriting.write(Data(text.utf8))
    }

    /// Closes its input, reads its output to the end and waits for it: (status, whole output).
    func finish() -> (Int32, String) {
        try? input.fileHandleForWriting.close()
        let rest = outputPipe.fileHandleForReading.readDataToEndOfFile()
        output += String(decoding: rest, as: UTF8.self)
        process.waitUntilExit()
        return (process.terminationStatus, output)
    }
}
