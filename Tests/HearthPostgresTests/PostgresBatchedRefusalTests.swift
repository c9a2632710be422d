import HearthJSON
import HearthStore
import HearthTesting
import Testing
@testable import HearthPostgres

/// A write its own server values refuse (an increment past the largest double) in one
/// PostgreSQL batch with others: as one write per transaction would go, only it fails, the
/// writes around it are applied, and its location keeps its number.
@Suite(.enabled(if: PostgresTests.enabled)) struct PostgresBatchedRefusalTests {
    static func path(_ text: String) -> DataPath { PostgresBatchWriteTests.path(text) }
    static func increment(_ by: Double) -> JSONValue { [".sv": ["increment": .double(by)]] }

    @Test func anIncrementPastTheLargestDoubleFailsOnlyItselfInItsBatch() throws {
        let prepared: [WriteOperation] = [
            .set(WriteEntry(path: Self.path("/big"), value: .double(1e308))),
            .set(WriteEntry(path: Self.path("/n"), value: 1)),
            .set(WriteEntry(path: Self.path("/counts"), value: ["n": 1, "big": .double(1e308)])),
        ]
        let operations: [WriteOperation] = [
            .set(WriteEntry(path: Self.path("/a"), value: 1)),
            .set(WriteEntry(path: Self.path("/big"), value: Self.increment(1e308))),
            .update(base: Self.path("/counts"), entries: [
                WriteEntry(path: Self.path("/counts/n"), value: Self.increment(1)),
                WriteEntry(path: Self.path("/counts/big"), value: Self.increment(1e308)),
            ]),
            .set(WriteEntry(path: Self.path("/n"), value: Self.increment(2))),
            .set(WriteEntry(path: Self.path("/c"), value: "after")),
        ]
        // The batch against one write per transaction: outcomes, tree and feed alike.
        try PostgresBatchWriteTests.checkOneBatch(prepared: prepared, operations, tooLarge: 0)
        // And what one write per transaction gives is the refusal of the two increments only.
        let alone = try PostgresEngine(url: try PostgresCluster.shared().makeDatabase(), options: PostgresBatchWriteTests.options)
        defer { alone.close() }
        for operation in prepared { try alone.writeSync(operation, check: nil) }
        let refused = operations.map { operation -> TreeError? in
            guard case .failure(.rejected(let error)) = Result(catching: { () throws(WriteFailure) in try alone.writeSync(operation, check: nil) })
            else { return nil }
            return error as? TreeError
        }
        #expect(refused == [nil, .incrementOutOfRange(at: Self.path("/big")), .incrementOutOfRange(at: Self.path("/counts/big")), nil, nil])
        #expect(try alone.readSync { try $0.exportValue(at: .root) }
            == ["a": 1, "big": .double(1e308), "counts": ["n": 1, "big": .double(1e308)], "n": 3, "c": "after"])
    }
}
