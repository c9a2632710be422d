import Dispatch
import HearthJSON
import Synchronization
import Testing
@testable import HearthSQLite
@testable import HearthStore

/// A write its own server values refuse (an increment past the largest double) in a group
/// commit with others: only that write fails; the others, before and after it in the same
/// transaction, are applied, and its location keeps its number.
@Suite struct BatchedRefusalTests {
    let dir = TemporaryDirectory()

    static func increment(_ by: Double) -> JSONValue { obj([".sv": obj(["increment": .double(by)])]) }

    @Test func anIncrementPastTheLargestDoubleFailsOnlyItselfInItsBatch() throws {
        let commits = Mutex<[Int]>([])
        let store = try SQLiteTreeStore(directory: dir.path, observeCommit: { writes, _ in commits.withLock { $0.append(writes) } })
        try store.put("big", .double(1e308))
        try store.put("n", .int(1))
        try store.put("counts", obj(["n": .int(1), "big": .double(1e308)]))
        let operations: [WriteOperation] = [
            .set(WriteEntry(path: path("a"), value: .int(1))),
            .set(WriteEntry(path: path("big"), value: Self.increment(1e308))),
            .update(base: path("counts"), entries: [
                WriteEntry(path: path("counts/n"), value: Self.increment(1)),
                WriteEntry(path: path("counts/big"), value: Self.increment(1e308)),
            ]),
            .set(WriteEntry(path: path("n"), value: Self.increment(2))),
            .set(WriteEntry(path: path("c"), value: .string("after"))),
        ]
        let results = Mutex<[Int: Result<WriteOutcome, WriteFailure>]>([:])
        let done = DispatchGroup()
        // Queued while the writer is busy, so all of them commit in the next batch.
        try store.onWriter { _ in
            for (index, operation) in operations.enumerated() {
                done.enter()
                store.write(operation) { result in
                    results.withLock { $0[index] = result }
                    done.leave()
                }
            }
        }
        done.wait()
        #expect(commits.withLock { $0 }.suffix(1) == [operations.count], "the writes committed as one batch")
        let refused = results.withLock { all in
            (0..<operations.count).map { index -> TreeError? in
                guard case .failure(.rejected(let error)) = all[index] else { return nil }
                return error as? TreeError
            }
        }
        #expect(refused == [nil, .incrementOutOfRange(at: path("big")), .incrementOutOfRange(at: path("counts/big")), nil, nil])
        for index in [0, 3, 4] {
            guard case .success? = results.withLock({ $0[index] }) else {
                Issue.record("write \(index) was not applied")
                continue
            }
        }
        #expect(try store.get("a") == .int(1))
        #expect(try store.get("big") == .double(1e308))
        #expect(try store.get("counts") == obj(["n": .int(1), "big": .double(1e308)]), "the refused update wrote none of its entries")
        #expect(try store.get("n") == .int(3))
        #expect(try store.get("c") == .string("after"))
    }
}
