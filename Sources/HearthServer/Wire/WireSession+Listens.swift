import Dispatch
import HearthHTTP
import HearthJSON
import HearthStreams
import HearthWire

extension WireSession {
    // MARK: Listens (docs/protocol/wire.md §4.2)

    func listen(number: Int64?, _ members: [JSONKey: JSONValue]) {
        guard let path = requestPath(number, members, action: "listen") else { return }
        let queryObject = members["q"] ?? JSONValue.object([JSONKey: JSONValue]())
        let wire: WireQuery
        let mapped: WireListenQuery?
        do {
            wire = try WireQuery(queryObject)
            mapped = wire.filters ? try WireListenQuery(wire) : nil
        } catch {
            return invalid(number, "bad query")
        }
        let tag: Int64? = mapped == nil ? nil : { if case .int(let t)? = members["t"] { return t } else { return nil } }()
        // A query that filters carries its tag (the SDKs always send one,
        // docs/protocol/wire.md §4.2): its pushes are told from the path's default listen
        // by it. Int64.min is the sink's "no tag" (it keeps the sink inline); no SDK counts
        // there.
        if mapped != nil && (tag == nil || tag == WireListenSink.noTag) {
            return invalid(number, "a query with bounds or a limit needs its tag t")
        }
        let key = ListenKey(path: path, query: mapped == nil ? JSONValue.object([JSONKey: JSONValue]()) : queryObject)
        if listenIndex(key) != nil { return answer(number, "ok", JSONValue.object([JSONKey: JSONValue]())) }
        guard listens.count < context.limits.maxListens else {
            return answer(number, "max_listens", .string("Too many listens on this connection"))
        }
        var warnings: JSONValue = JSONValue.object([JSONKey: JSONValue]())
        if context.database.missingIndex(mapped?.listen, at: path) != nil {
            // The SDK logs its "unspecified index" warning; Hearth serves the query anyway
            // (docs/protocol/wire.md §4.2 item 5), as REST refuses it only to match
            // Firebase's REST.
            warnings = .object(["w": .array([.string("no_index")])])
        }
        let okData = warnings
        let times = credentialTimes ?? CredentialTimes(issuedAt: credential.issuedAt, expiresAt: credential.expiresAt)
        credentialTimes = times
        let gate = SubscriberGate(caller: credential.caller, uid: credential.uid, times: times, query: mapped?.listen.rules)
        let listenSink = WireListenSink(session: self, path: path, tag: tag)
        // A compound hash (iOS, Android) on a location listen: only the ranges that
        // changed are sent. Queries get their whole window, always correct
        // (docs/protocol/wire.md §4.2).
        var sink: any StreamEventSink = listenSink
        if mapped == nil, let compound = WireCompoundListenSink.parse(members["ch"]) {
            sink = WireCompoundListenSink(listen: listenSink, hashes: compound.hashes, posts: compound.posts)
        }
        context.database.listen(path, query: mapped?.listen, as: credential.caller, gate: gate, address: address,
                                hub: context.hub, sink: sink) { result in
            self.queue.async {
                switch result {
                case .success(let listening):
                    if self.closed {
                        listening.cancel()
                        return self.done()
                    }
                    self.listens.append(OpenListen(key: key, listening: listening, tag: tag))
                    self.answer(number, "ok", okData)
                case .failure(let error):
                    self.failed(number, error)
                }
            }
        }
    }

    func unlisten(number: Int64?, _ members: [JSONKey: JSONValue]) {
        guard let path = requestPath(number, members, action: "unlisten") else { return }
        let queryObject = members["q"] ?? JSONValue.object([JSONKey: JSONValue]())
        let filters = (try? WireQuery(queryObject))?.filters ?? false
        let key = ListenKey(path: path, query: filters ? queryObject : JSONValue.object([JSONKey: JSONValue]()))
        if let index = listenIndex(key) { listens.remove(at: index).listening.cancel() }
        answer(number, "ok", .string(""))
    }

    /// The hub ended the listen at `path` with `tag` (access lost, or the credential
    /// expired). A session has one listen per path and tag: one default listen per path,
    /// and the SDK gives each query its own tag.
    func listenEnded(path: DataPath, tag: Int64?, verdict: StreamVerdict) {
        queue.async {
            guard let index = self.listens.firstIndex(where: { $0.key.path == path && $0.tag == tag }) else { return }
            let listen = self.listens.remove(at: index)
            switch verdict {
            case .authRevoked:
                // The client forgets its token, reconnects and authenticates again (§3.3).
                self.lapse(nil)
            case .cancel, .keep:
                self.revoked(listen.key, tag: listen.tag)
            case .reconnect:
                // This node missed changes: the client reconnects and listens again, and
                // gets whole values then (the protocol has no "start over" for a listen).
                self.session?.close(.goingAway, reason: "missed changes; reconnect")
                self.end()
            }
        }
    }

    /// Pushes `c` for a listen the server dropped (§3.3: `q` as an array, omitted for a
    /// location listen).
    func revoked(_ key: ListenKey, tag: Int64?) {
        var body: [JSONKey: JSONValue] = ["p": .string(key.path.description)]
        if tag != nil { body["q"] = .array([key.query]) }
        session?.send(message: WireOutbound.push(action: "c", body: .object(body)).bytes)
    }
}
