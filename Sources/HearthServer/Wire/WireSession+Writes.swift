import Dispatch
import HearthHTTP
import HearthJSON
import HearthStreams
import HearthWire

extension WireSession {
    // MARK: Writes (docs/protocol/wire.md §4.3, §4.4)

    func put(number: Int64?, _ members: [JSONKey: JSONValue]) {
        guard let data = members["d"] else { return invalid(number, "put needs p and d") }
        guard let path = requestPath(number, members, action: "put") else { return }
        let operation: DatabaseWrite
        do {
            operation = try DatabaseWrite.set(data, at: path)
        } catch {
            return answer(number, "invalid_data", .string(error.description))
        }
        // A transaction's put: a hash that is not a string is refused, not dropped, which
        // would make the compare-and-set an unconditional write.
        var precondition: Database.Precondition? = nil
        switch members["h"] {
        case nil, .null?: break
        case .string(let hash)?: precondition = .ifHash(hash, nodeHash: SDKHash.hash)
        default: return invalid(number, "put's h (the hash of the value it expects) must be a string")
        }
        write(number: number, operation, precondition: precondition)
    }

    func merge(number: Int64?, _ members: [JSONKey: JSONValue]) {
        guard let data = members["d"] else { return invalid(number, "merge needs p and d") }
        guard let path = requestPath(number, members, action: "merge") else { return }
        do {
            guard let update = try DatabaseWrite.update(data, at: path) else { return answer(number, "ok", .string("")) }
            write(number: number, update, precondition: nil)
        } catch {
            answer(number, "invalid_data", .string(error.description))
        }
    }

    func write(number: Int64?, _ operation: DatabaseWrite, precondition: Database.Precondition?) {
        context.database.write(operation, as: credential.caller, precondition: precondition,
                               fence: leaseEpoch.map { .init(epoch: $0) }) { result in
            switch result {
            case .success: self.answerLater(number, "ok", .string(""))
            case .failure(let error): self.queue.async { self.failed(number, error) }
            }
        }
    }

    // MARK: get (docs/protocol/wire.md §4.8)

    func get(number: Int64?, _ members: [JSONKey: JSONValue]) {
        // `.info/...` is client-side; the JS SDK still asks (docs/protocol/wire.md §4.8):
        // `ok` with null. Checked before parsing: `.info` is not a valid key, so it never
        // reaches the data.
        if case .string(let raw)? = members["p"], raw == "/.info" || raw.hasPrefix("/.info/") || raw.hasPrefix(".info") {
            return answer(number, "ok", .null)
        }
        guard let path = requestPath(number, members, action: "get") else { return }
        let mapped: WireListenQuery?
        do {
            let wire = try WireQuery(members["q"] ?? JSONValue.object([JSONKey: JSONValue]()))
            mapped = wire.filters ? try WireListenQuery(wire) : nil
        } catch {
            return invalid(number, "bad query")
        }
        context.database.read(path, query: mapped?.listen.rules, as: credential.caller, { view -> JSONValue in
            if let mapped { return FirebaseTree.render(try view.query(mapped.listen.tree, at: path)) }
            return FirebaseTree.render(try view.value(at: path))
        }, completion: { result in
            switch result {
            case .success(let value): self.answerLater(number, "ok", value)
            case .failure(let error): self.queue.async { self.failed(number, error) }
            }
        })
    }

    // MARK: onDisconnect (docs/protocol/wire.md §4.5)

    func registerOnDisconnect(number: Int64?, merge: Bool, _ members: [JSONKey: JSONValue]) {
        guard let data = members["d"] else { return invalid(number, "onDisconnect needs p and d") }
        guard let path = requestPath(number, members, action: "onDisconnect") else { return }
        let operation: DatabaseWrite
        do {
            if merge {
                guard let update = try DatabaseWrite.update(data, at: path) else { return answer(number, "ok", .string("")) }
                operation = update
            } else {
                operation = try DatabaseWrite.set(data, at: path)
            }
        } catch {
            return answer(number, "invalid_data", .string("\(error)"))
        }
        guard onDisconnect.count < context.limits.maxOnDisconnect else {
            return answer(number, "too_many_ondisconnect", .string("Too many onDisconnect operations on this connection"))
        }
        let caller = credential.caller
        let unplaced = OnDisconnectLedger.Entry(position: 0, write: operation, caller: caller)
        let bytes = unplaced.bytes
        guard onDisconnectBytes + bytes <= context.limits.maxOnDisconnectBytes else {
            return answer(number, "too_many_ondisconnect", .string(
                "onDisconnect operations on this connection would pass \(context.limits.maxOnDisconnectBytes) bytes"))
        }
        let (budget, address) = (context.sessions.onDisconnectBudget, self.address)
        if let refusal = budget.reserve(bytes, for: address) {
            return answer(number, "too_many_ondisconnect", .string(refusal == .address
                ? "onDisconnect operations from your address would pass \(budget.perAddress) bytes"
                : "onDisconnect operations on this server would pass \(budget.total) bytes; try again later"))
        }
        // The bytes are this session's from here: given back on every path that does not
        // queue the entry, else when it is cancelled or handed to the writer (`end`).
        context.database.checkWrite(operation, as: caller, now: context.clock()) { result in
            self.queue.async {
                switch result {
                case .success:
                    // The connection ended while this was being checked: the client never
                    // learns it was registered, and end() has run the queue already.
                    if self.closed {
                        budget.release(bytes, for: address)
                        return self.done()
                    }
                    var placed = unplaced
                    placed.position = self.nextPosition
                    let entry = placed
                    self.nextPosition += 1
                    self.registeredOnDisconnect = true
                    let (ledger, session) = (self.context.onDisconnect, self.sessionID.description)
                    self.context.work.async {
                        let failure: DatabaseError?
                        do {
                            try ledger.register(session: session, entry)
                            failure = nil
                        } catch {
                            failure = DatabaseError.from(error)
                        }
                        self.queue.async {
                            if let failure {
                                budget.release(bytes, for: address)
                                return self.failed(number, failure)
                            }
                            if self.closed {
                                // Ended while the record was written: end() ran without it.
                                // The client never learns it was registered; forget it.
                                budget.release(bytes, for: address)
                                self.context.work.async { ledger.forget(session: session) }
                                return self.done()
                            }
                            self.onDisconnect.append(entry)
                            self.onDisconnectBytes += bytes
                            self.answer(number, "ok", .string(""))
                        }
                    }
                case .failure(let error):
                    budget.release(bytes, for: address)
                    self.failed(number, error)
                }
            }
        }
    }
}
