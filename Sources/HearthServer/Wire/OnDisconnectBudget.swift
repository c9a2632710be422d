import Synchronization

/// Bytes of queued onDisconnect operations (as stored: `OnDisconnectLedger.Entry.bytes`),
/// per client address and in all, over every namespace's sessions. A connection may keep its
/// operations for as long as it stays open, each is a record in the store too, and all of a
/// connection's run at once when it ends: without this, an address's 1,200 connections
/// could each keep `WireSessionLimits.maxOnDisconnectBytes`.
final class OnDisconnectBudget: Sendable {
    enum Refusal: Equatable {
        /// `perAddress` would be passed.
        case address
        /// `total` would be passed.
        case server
    }

    let perAddress: Int
    let total: Int
    private let held = Mutex<(total: Int, byAddress: [String: Int])>((0, [:]))

    init(perAddress: Int = WireSessionLimits.defaultMaxOnDisconnectBytesPerAddress,
         total: Int = WireSessionLimits.defaultMaxOnDisconnectBytesInAll) {
        self.perAddress = perAddress
        self.total = total
    }

    /// Takes `bytes` for `address`: nil when they fit, else the bound they would pass (and
    /// nothing is taken).
    func reserve(_ bytes: Int, for address: String) -> Refusal? {
        held.withLock { held in
            let mine = held.byAddress[address, default: 0] + bytes
            if mine > perAddress { return .address }
            if held.total + bytes > total { return .server }
            held.byAddress[address] = mine
            held.total += bytes
            return nil
        }
    }

    /// Gives back `bytes` that `address` took.
    func release(_ bytes: Int, for address: String) {
        guard bytes > 0 else { return }
        held.withLock { held in
            let mine = held.byAddress[address, default: 0] - bytes
            held.byAddress[address] = mine > 0 ? mine : nil
            held.total -= bytes
        }
    }

    /// Bytes `address` holds now (tests).
    func held(by address: String) -> Int {
        held.withLock { $0.byAddress[address, default: 0] }
    }

    /// Bytes held now, every address together (tests).
    var heldInAll: Int { held.withLock { $0.total } }
}
