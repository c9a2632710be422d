import HearthJSON
import HearthRules
import HearthStore
import HearthWire
import Testing
@testable import HearthServer

/// The wire adapter's pure parts, from literals: query objects to the core's queries, and
/// core errors to the statuses the SDKs expect (docs/protocol/wire.md §3.1, §4.1).
@Suite struct WireUnitTests {
    func mapped(_ text: String) throws -> WireListenQuery {
        try WireListenQuery(WireQuery(try JSONParser.parse(Array(text.utf8))))
    }

    @Test func limitToLastByAChildNeedsItsIndex() throws {
        let query = try mapped(#"{"l":2,"vf":"r","i":"createdAt"}"#)
        #expect(query.listen.tree == TreeQuery(orderBy: .child(try DataPath(string: "createdAt")), limit: .last(2)))
        #expect(query.listen.rules == RuleQuery(orderBy: .child("createdAt"), limitToLast: 2))
        #expect(query.requiredIndex == "createdAt")
    }

    @Test func boundsAndTheSDKsSentinels() throws {
        // JS startAt/endAt: inclusive; equal bounds are equalTo for the rules.
        let equal = try mapped(#"{"i":".value","sp":5,"sin":true,"ep":5,"ein":true}"#)
        #expect(equal.listen.tree.start == TreeQuery.Bound(.int(5), inclusive: true))
        #expect(equal.listen.tree.end == TreeQuery.Bound(.int(5), inclusive: true))
        #expect(equal.listen.rules.equalTo == .int(5))
        #expect(equal.requiredIndex == ".value")
        // JS startAfter: sin false. iOS startAfter: no sin, sn [MAX_NAME]. Both exclusive.
        #expect(try mapped(#"{"i":"n","sp":1,"sin":false}"#).listen.tree.start == TreeQuery.Bound(.int(1), inclusive: false))
        #expect(try mapped(#"{"i":"n","sp":1,"sn":"[MAX_NAME]"}"#).listen.tree.start == TreeQuery.Bound(.int(1), inclusive: false))
        #expect(try mapped(#"{"i":"n","ep":9,"en":"[MIN_NAME]"}"#).listen.tree.end == TreeQuery.Bound(.int(9), inclusive: false))
        // iOS startAt: no sin means inclusive; a real key name breaks ties at the value
        // (startAt(value, key)), and JS startAfter(value, key) leaves that key out.
        #expect(try mapped(#"{"i":"n","sp":1}"#).listen.tree.start == TreeQuery.Bound(.int(1), inclusive: true))
        #expect(try mapped(#"{"i":"n","sp":1,"sn":"k"}"#).listen.tree.start == TreeQuery.Bound(.int(1), inclusive: true, key: "k"))
        #expect(try mapped(#"{"i":"n","sp":1,"sn":"k","sin":false}"#).listen.tree.start == TreeQuery.Bound(.int(1), inclusive: false, key: "k"))
        #expect(try mapped(#"{"i":"n","ep":1,"en":"k"}"#).listen.tree.end == TreeQuery.Bound(.int(1), inclusive: true, key: "k"))
        #expect(try mapped(#"{"i":"n","sp":1,"sn":"[MIN_NAME]"}"#).listen.tree.start == TreeQuery.Bound(.int(1), inclusive: true))
    }

    @Test func keyAndPriorityOrdersNeedNoIndex() throws {
        let byKey = try mapped(#"{"i":".key","sp":"a","l":3,"vf":"l"}"#)
        #expect(byKey.listen.tree.orderBy == .key && byKey.listen.tree.limit == .first(3) && byKey.requiredIndex == nil)
        let byPriority = try mapped(#"{"l":1,"vf":"l"}"#)
        #expect(byPriority.listen.tree.orderBy == .priority && byPriority.requiredIndex == nil)
    }

    @Test func badChildPathsAreRefused() {
        #expect(throws: WireError.self) { try mapped(#"{"i":"a.b","l":1,"vf":"l"}"#) }
        #expect(throws: WireError.self) { try mapped(#"{"i":"a[0]","l":1,"vf":"l"}"#) }
    }

    @Test func everyCoreErrorHasAStatusAndANonEmptyText() {
        let errors: [DatabaseError] = [
            .permissionDenied(nil), .stale(current: .null, tag: ""), .tooLarge(.writes(limit: 1)),
            .storageFull, .unavailable(cause: "x"), .outcomeUnknown(cause: "x"), .tooManyListens, .internalError(reason: "x"),
        ]
        for error in errors {
            let (status, text) = WireSession.status(of: error)
            #expect(!status.isEmpty && !text.isEmpty)
            #expect(status == status.lowercased())
        }
        #expect(WireSession.status(of: .permissionDenied(nil)).0 == "permission_denied")
        #expect(WireSession.status(of: .stale(current: .null, tag: "")).0 == "datastale")
        // A write that may have been written says so, apart from one that certainly was not.
        #expect(WireSession.status(of: .outcomeUnknown(cause: "x")).1 != WireSession.status(of: .unavailable(cause: "x")).1)
        #expect(WireSession.status(of: .outcomeUnknown(cause: "x")).1.contains("whether it was written is unknown"))
    }

    @Test func sessionIDsAre128RandomBitsInHex() {
        let ids = (0..<100).map { _ in WireEndpoint.sessionID() }
        #expect(Set(ids).count == 100)
        #expect(ids.allSatisfy { $0.description.count == 32 && $0.description.allSatisfy(\.isHexDigit) })
        // What a reconnecting client sends back (`ls`) names the same session.
        #expect(ids.allSatisfy { WireSessionID(hex: $0.description) == $0 })
        #expect(WireSessionID(high: 1, low: 0xAB).description == "0000000000000001" + "00000000000000ab")
        for bad in ["", "00", String(repeating: "g", count: 32), String(repeating: "0", count: 33), "+" + String(repeating: "0", count: 31)] {
            #expect(WireSessionID(hex: bad) == nil, "\(bad)")
        }
    }

    /// A wire listen's gate follows its session's credential times: a same-identity token
    /// refresh moves its expiry and issue time (else the listen ended with `ac` when the
    /// first token lapsed, an hour into every session); an SSE gate keeps its own.
    @Test func aListenGateFollowsItsSessionsRenewedCredential() {
        let caller = Caller(auth: .object(["uid": "u1"]), isAdmin: false)
        let times = CredentialTimes(issuedAt: 1_000, expiresAt: 4_600_000)
        let listen = SubscriberGate(caller: caller, uid: "u1", times: times)
        let stream = SubscriberGate(caller: caller, uid: "u1", issuedAt: 1_000, expiresAt: 4_600_000)
        #expect(listen.expiresAt == 4_600_000 && listen.issuedAt == 1_000)
        times.renew(issuedAt: 4_000, expiresAt: 7_600_000)
        #expect(listen.expiresAt == 7_600_000)
        #expect(listen.issuedAt == 4_000)
        #expect(stream.expiresAt == 4_600_000 && stream.issuedAt == 1_000)
    }
}
