import Dispatch
import HearthJSON
import Synchronization
import HearthStore

/// The wire protocol's onDisconnect operations, kept in the database as well as with their
/// connection (beyond Firebase): when a connection ends its operations run and
/// are forgotten; when Hearth itself died with connections open, their operations run
/// when it starts again (`runLeftovers`), so presence never sticks at "online".
///
/// Each operation runs as the caller who registered it, judged by the rules again, with
/// server values resolved when it runs, and only while that caller's identity still
/// stands (`registrantStands`: a user deleted, disabled or whose tokens were revoked
/// since registering has their operations dropped). On a shared engine each
/// runs exactly once: its write is fenced by its record (`WriteFence`), which the write's
/// own transaction removes under the running node's lease, so a node that lost the record
/// to another (its lease ran out) writes nothing for it. With one node they run at least
/// once: a crash after the writes and before the records are removed runs them again at
/// the next start (a set is idempotent; an increment would apply twice).
public struct OnDisconnectLedger: Sendable {
    let records: (any OnDisconnectRecords)?
    let database: Database
    let registrantStands: @Sendable (Caller) -> Bool

    /// - Parameters:
    ///   - records: where operations are persisted; nil keeps them in memory only.
    ///   - registrantStands: whether the identity an operation was registered under may
    ///     still act (called off the I/O queues; it may read the database). Its token's
    ///     expiry does not count: a connection's operations run after it ends, however long
    ///     its token had left.
    public init(records: (any OnDisconnectRecords)?, database: Database,
                registrantStands: @escaping @Sendable (Caller) -> Bool = { _ in true }) {
        self.records = records
        self.database = database
        self.registrantStands = registrantStands
    }

    /// A ledger whose operations run only while their registrant's sign-in stands:
    /// `isStillValid(uid, issuedAt)` (not revoked, disabled or deleted since); a registrant
    /// not signed in as a user (`Caller.signedInAs` nil) always stands.
    public init(records: (any OnDisconnectRecords)?, database: Database,
                isStillValid: @escaping @Sendable (_ uid: String, _ issuedAt: Int64) -> Bool) {
        self.init(records: records, database: database, registrantStands: Self.stands(isStillValid))
    }

    /// Whether a registrant stands, from whether its sign-in is still valid; a registrant
    /// not signed in as a user always stands.
    public static func stands(_ isStillValid: @escaping @Sendable (_ uid: String, _ issuedAt: Int64) -> Bool)
        -> @Sendable (Caller) -> Bool {
        { caller in
            guard let signedIn = caller.signedInAs else { return true }
            return isStillValid(signedIn.uid, signedIn.issuedAt)
        }
    }

    /// One queued operation. It keeps the operation as stored (`encode`), not as a tree
    /// several times that size: a connection may keep its operations for days, and they
    /// are decoded only when they run.
    public struct Entry: Sendable {
        public var position: Int64
        /// The operation's JSON, as its record stores it.
        public let encodedOperation: String
        /// Where the operation writes: a set's path, an update's base.
        public let base: DataPath
        public let caller: Caller
        /// The operation's and its registrant's stored size (the record keeps both, and
        /// an ID token's claims can be larger than the operation): what its connection's
        /// and its address's budgets count.
        public let bytes: Int

        public init(position: Int64, operation: WriteOperation, caller: Caller) {
            self.init(position: position, encodedOperation: OnDisconnectLedger.encode(operation),
                      base: DatabaseWrite(operation).base, caller: caller)
        }

        /// An entry of a transport's write (`DatabaseWrite`).
        public init(position: Int64, write: DatabaseWrite, caller: Caller) {
            self.init(position: position, encodedOperation: OnDisconnectLedger.encode(write.operation), base: write.base, caller: caller)
        }

        /// `encodedCaller` is the registrant as a record stores it, when the entry is read
        /// from one; else it is encoded here, to count its bytes.
        init(position: Int64, encodedOperation: String, base: DataPath, caller: Caller, encodedCaller: String? = nil) {
            self.position = position
            self.encodedOperation = encodedOperation
            self.base = base
            self.caller = caller
            bytes = encodedOperation.utf8.count + (encodedCaller ?? OnDisconnectLedger.encode(caller)).utf8.count
        }

        /// The operation, decoded (nil only for a record that was not written by `encode`).
        public var operation: WriteOperation? { OnDisconnectLedger.decodeOperation(encodedOperation) }
    }

    public func register(session: String, _ entry: Entry) throws {
        try records?.add(OnDisconnectRecord(session: session, position: entry.position,
                                            operation: entry.encodedOperation, caller: Self.encode(entry.caller)))
    }

    public func cancel(session: String, positions: [Int64]) throws {
        try records?.remove(session: session, positions: positions)
    }

    /// Forgets the session's records without running them.
    public func forget(session: String) {
        try? records?.removeAll(session: session)
    }

    /// Runs `entries` in order (the single writer keeps the order they are queued in),
    /// then forgets the session's records; `completion` after the last write.
    public func run(session: String, _ entries: [Entry], completion: @escaping @Sendable () -> Void = {}) {
        // One verdict per registrant: every operation of a session is usually one caller's.
        var verdicts: [(caller: Caller, stands: Bool)] = []
        let entries = entries.filter { entry in
            if entry.caller.isAdmin { return true }
            if let known = verdicts.first(where: { $0.caller == entry.caller }) { return known.stands }
            let stands = registrantStands(entry.caller)
            verdicts.append((entry.caller, stands))
            return stands
        }
        guard !entries.isEmpty else {
            forget(session: session)
            return completion()
        }
        let remaining = Countdown(entries.count) {
            // The last write's completion runs on the store's writer queue, which removing
            // the records needs too: do it from elsewhere.
            DispatchQueue.global().async {
                self.forget(session: session)
                completion()
            }
        }
        for entry in entries {
            guard let operation = entry.operation else {
                remaining.tick()
                continue
            }
            // Fenced: written only while this node holds the record under its lease, and
            // the record is consumed in the same transaction, so an operation another node
            // took over (or ran) is not written here again.
            let fence = WriteFence(epoch: nil, session: session, position: entry.position)
            database.write(operation, as: entry.caller, fence: fence) { _ in remaining.tick() }
        }
    }

    /// The lease this node's sessions write under now (`OnDisconnectRecords.leaseEpoch`;
    /// nil with one node).
    public var leaseEpoch: String? { records?.leaseEpoch }

    /// A reconnecting client named `session`, which this node does not hold in memory: on
    /// a shared engine it may live on another node, or its node may be gone. Its records
    /// become this node's and run now; `completion` after they are committed (or refused),
    /// so the new session's writes come after them. Blocking: call off the I/O queues.
    public func runClaimed(session: String, completion: @escaping @Sendable () -> Void) {
        guard let records, let claimed = try? records.claim(session: session), !claimed.isEmpty else { return completion() }
        let (bySession, _) = Self.entries(of: claimed)
        run(session: session, bySession[session] ?? [], completion: completion)
    }

    /// Records decoded into each session's entries, sessions in the order first seen.
    static func entries(of records: [OnDisconnectRecord]) -> (bySession: [String: [Entry]], order: [String]) {
        var bySession: [String: [Entry]] = [:]
        var order: [String] = []
        for record in records {
            guard let operation = decodeOperation(record.operation), let caller = decodeCaller(record.caller) else { continue }
            if bySession[record.session] == nil { order.append(record.session) }
            bySession[record.session, default: []].append(Entry(
                position: record.position, encodedOperation: record.operation, base: DatabaseWrite(operation).base, caller: caller,
                encodedCaller: record.caller))
        }
        return (bySession, order)
    }

    /// Stored bytes of leftover operations handed to the writer at once (`runLeftovers`).
    /// Each is parsed when it is handed over and held until it is written, several times
    /// its size: all of a crashed server's at once (up to the wire sessions' 256 MiB in
    /// all) took a restart to 1.2 GB. One session's operations always go together.
    public static let leftoverBytesInFlight = 16 * 1024 * 1024
    /// Stored bytes of leftover records read from the database at once
    /// (`OnDisconnectRecords.orphans`): a page's text is held until its operations are
    /// handed over, where reading every record held all of them at once (up to 256 MiB).
    /// A page ends with the session that reaches it, so it may pass it by one session.
    public static let leftoverBytesPerRead = 16 * 1024 * 1024

    /// Runs what sessions of servers that are gone left: a previous run of this server
    /// (call at start, before serving), or, on a shared engine, nodes whose lease expired
    /// (call periodically). Records are read a page of about `bytesPerRead` at a time.
    /// Sessions are handed to the writer together until their operations pass
    /// `bytesInFlight`; the next waits until those are written. Returns how many
    /// operations ran.
    @discardableResult
    public func runLeftovers(bytesInFlight: Int = OnDisconnectLedger.leftoverBytesInFlight,
                             bytesPerRead: Int = OnDisconnectLedger.leftoverBytesPerRead) throws -> Int {
        guard let records else { return 0 }
        let done = DispatchGroup()
        var handedOver = 0
        var ran = 0
        var after: String?
        while true {
            let page = try records.orphans(after: after, bytes: bytesPerRead)
            guard let last = page.last else { break }
            after = last.session
            let (bySession, order) = Self.entries(of: page)
            for session in order {
                let entries = bySession[session] ?? []
                let bytes = entries.reduce(0) { $0 + $1.bytes }
                if handedOver > 0 && handedOver + bytes > bytesInFlight {
                    done.wait()
                    handedOver = 0
                }
                handedOver += bytes
                ran += entries.count
                done.enter()
                run(session: session, entries) { done.leave() }
            }
            // Sessions whose records did not decode are forgotten too.
            for record in page where bySession[record.session] == nil { try? records.removeAll(session: record.session) }
        }
        done.wait()
        return ran
    }

    // MARK: Encoding

    static func encode(_ operation: WriteOperation) -> String {
        let json: JSONValue
        switch operation {
        case .set(let entry):
            json = .object(["set": .string(entry.path.description), "value": entry.value ?? .null])
        case .update(let base, let entries):
            json = .object(["update": .string(base.description), "entries": .array(entries.map {
                .array([.string($0.path.description), $0.value ?? .null])
            })])
        }
        return String(decoding: JSONWriter.write(json), as: UTF8.self)
    }

    static func decodeOperation(_ text: String) -> WriteOperation? {
        guard case .object(let members)? = try? JSONParser.parse(Array(text.utf8)) else { return nil }
        func value(_ v: JSONValue?) -> JSONValue? { v == nil || v == .null ? nil : v }
        if case .string(let path)? = members["set"], let target = try? DataPath(string: path) {
            return .set(WriteEntry(path: target, value: value(members["value"])))
        }
        if case .string(let base)? = members["update"], let basePath = try? DataPath(string: base),
           case .array(let items)? = members["entries"] {
            var entries: [WriteEntry] = []
            for item in items {
                guard case .array(let pair) = item, pair.count == 2, case .string(let path) = pair[0],
                      let target = try? DataPath(string: path) else { return nil }
                entries.append(WriteEntry(path: target, value: value(pair[1])))
            }
            return .update(base: basePath, entries: entries)
        }
        return nil
    }

    static func encode(_ caller: Caller) -> String {
        String(decoding: JSONWriter.write(.object(["auth": caller.auth, "admin": .bool(caller.isAdmin)])), as: UTF8.self)
    }

    static func decodeCaller(_ text: String) -> Caller? {
        guard case .object(let members)? = try? JSONParser.parse(Array(text.utf8)), let auth = members["auth"],
              case .bool(let admin)? = members["admin"] else { return nil }
        return Caller(auth: auth, isAdmin: admin)
    }
}

/// Calls `done` once after `count` ticks, from whichever thread ticks last.
final class Countdown: Sendable {
    private let left: Mutex<Int>
    private let done: @Sendable () -> Void

    init(_ count: Int, done: @escaping @Sendable () -> Void) {
        left = Mutex(count)
        self.done = done
    }

    func tick() {
        if left.withLock({ $0 -= 1; return $0 == 0 }) { done() }
    }
}
