import HearthJSON
import HearthStore
import Testing
@testable import HearthDatabase

/// What an onDisconnect operation's budget counts: the record as stored, its operation's
/// JSON and its registrant's (the caller's auth and whether it is an admin).
@Suite struct OnDisconnectEntryTests {
    static let operation = WriteOperation.set(WriteEntry(path: try! DataPath(string: "/presence/u1"), value: .string("offline")))

    @Test func anEntrysBytesCountItsOperationAndItsRegistrant() {
        let claims: JSONValue = .object(["uid": .string("u1"), "token": .object(["note": .string(String(repeating: "c", count: 2_000))])])
        let signedIn = OnDisconnectLedger.Entry(position: 0, operation: Self.operation, caller: Caller(auth: claims))
        let signedOut = OnDisconnectLedger.Entry(position: 0, operation: Self.operation, caller: Caller(auth: .null))
        let operationBytes = OnDisconnectLedger.encode(Self.operation).utf8.count
        #expect(signedIn.bytes == operationBytes + OnDisconnectLedger.encode(Caller(auth: claims)).utf8.count)
        #expect(signedOut.bytes == operationBytes + #"{"admin":false,"auth":null}"#.utf8.count)
        // The claims are counted in full: larger than the operation itself here.
        #expect(signedIn.bytes - signedOut.bytes > 2_000)
        #expect(signedIn.bytes > 2 * operationBytes)
    }

    /// A leftover read back from its record (at a restart, or from a node that is gone)
    /// counts the record's own text, as the budget of the leftovers in flight does; the
    /// registrant spelled with spaces is not re-encoded to a shorter count.
    @Test func anEntryReadFromItsRecordCountsTheRecordAsStored() {
        let record = OnDisconnectRecord(session: "s1", position: 3, operation: OnDisconnectLedger.encode(Self.operation),
                                        caller: #"{ "admin": false, "auth": { "uid": "u1" } }"#)
        let (bySession, order) = OnDisconnectLedger.entries(of: [record])
        #expect(order == ["s1"])
        #expect(bySession["s1"]?.map(\.bytes) == [record.operation.utf8.count + record.caller.utf8.count])
        #expect(bySession["s1"]?.first?.caller == Caller(auth: .object(["uid": .string("u1")])))
    }
}
