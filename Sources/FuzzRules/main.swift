// libFuzzer target for HearthRules (docs/linux-notes.md, "libFuzzer with Swift here").
//
//   swift build -c debug --scratch-path .build-fuzz --sanitize=fuzzer \
//       -Xswiftc -sanitize=fuzzer,address --product FuzzRules
//   cp -r Fuzz/corpus/rules /tmp/rules-corpus
//   .build-fuzz/debug/FuzzRules -max_total_time=30 /tmp/rules-corpus
//
// Only declarations live here: libFuzzer supplies `main` in the fuzzing build, and a plain
// `swift build` still compiles this into a harmless no-op executable.
//
// Every input is compiled as a rules file, and also as the expression of every rule kind
// in a fixed file. Compiling a file must either succeed or throw
// diagnostics that each carry a position inside the file. A file that compiles is asked
// for reads and writes (a plain set, a delete and a multi-path update, with and without
// tracing) against a small fixed tree, under a tight budget so that slow rules show up as
// denials, not timeouts. Properties checked:
// * the traced and untraced decisions agree, and every explanation ends with a summary;
// * asking twice gives the same answer (decisions are pure);
// * the same rules compiled for coverage decide exactly as the plain ones (answer and
//   explanation), and every coverage site's span lies inside the file.

import HearthJSON
import HearthRules

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let text = String(decoding: UnsafeRawBufferPointer(start: data, count: size), as: UTF8.self)
    let limits = RuleLimits(maxEvaluationSteps: 20_000, maxValidatedNodes: 1_000)
    do {
        let rules = try RuleSet.compile(text, limits: limits)
        exercise(rules)
        checkCoverage(rules, fileBytes: text.utf8.count)
    } catch {
        checkDiagnostics(error, text: text)
    }
    // The same bytes as one expression used by every rule kind, to reach the expression
    // language without having to get the JSON around it right first.
    let asExpression: JSONValue = .object(["rules": .object([
        "users": .object(["$uid": .object([".read": .string(text), ".write": .string(text)])]),
        "public": .object([".validate": .string(text), ".write": .bool(true)]),
    ])])
    if let rules = try? RuleSet.compile(json: asExpression, limits: limits) {
        exercise(rules)
        checkCoverage(rules, fileBytes: nil)
    }
    return 0
}

func checkDiagnostics(_ error: RulesCompileError, text: String) {
    precondition(!error.diagnostics.isEmpty, "a rejected file must say why")
    let lines = text.utf8.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false).count
    for diagnostic in error.diagnostics {
        precondition(diagnostic.line >= 1 && diagnostic.line <= lines, "line out of range: \(diagnostic)")
        precondition(diagnostic.column >= 1, "column out of range: \(diagnostic)")
        precondition(!diagnostic.message.isEmpty)
    }
}

func fixedTree() -> JSONTreeSource {
    let favorite: JSONValue = .object([
        "id": "f1", "name": "Oslo", "createdAt": .int(1_700_000_000_000),
        "createdBy": "alice", "latitude": .double(59.91), "longitude": .double(10.75),
    ])
    return JSONTreeSource(.object([
        "users": .object([
            "alice": .object(["favorites": .object(["f1": favorite]), "name": "Alice", "age": .int(30)]),
            "bob": .object(["flag": .bool(true)]),
        ]),
        "public": "hello",
    ]))
}

func path(_ text: String) -> DataPath {
    (try? DataPath(string: text)) ?? .root
}

func exercise(_ rules: RuleSet) {
    let data = fixedTree()
    let alice: JSONValue = .object(["uid": "alice", "provider": "password", "token": .object(["admin": .bool(false), "email": "a@example.com"])])
    let now: Int64 = 1_700_000_000_000
    let reads = ["", "users", "users/alice/favorites/f1", "users/bob/flag", "public", "nowhere/deep/down"]
    for target in reads {
        for who in [alice, JSONValue.null] {
            let plain = rules.canRead(path(target), data: data, auth: who, now: now, query: nil)
            let traced = rules.canRead(path(target), data: data, auth: who, now: now, query: RuleQuery(), explain: true)
            precondition(plain.allowed == traced.allowed, "explain changed a read decision")
            precondition(!plain.explanation.isEmpty && traced.explanation.count >= plain.explanation.count)
            let again = rules.canRead(path(target), data: data, auth: who, now: now, query: nil)
            precondition(again.allowed == plain.allowed, "read decision not repeatable")
        }
        _ = rules.indexes(at: path(target))
    }
    let query = RuleQuery(orderBy: .child("name"), startAt: "a", equalTo: .int(3), limitToFirst: 10)
    _ = rules.canRead(path("users"), data: data, auth: alice, now: now, query: query)

    let favorite: JSONValue = .object([
        "id": "f2", "name": "Rome", "createdAt": .int(now), "createdBy": "alice",
        "latitude": .double(41.9), "longitude": .double(12.5),
    ])
    let writeSets: [[(path: DataPath, value: JSONValue?)]] = [
        [(path("users/alice/favorites/f2"), favorite)],
        [(path("users/alice/favorites/f1"), nil)],
        [(path("public"), "bye")],
        [(.root, .object(["x": .int(1)]))],
        [(path("users/alice/name"), "Al"), (path("users/bob/flag"), nil), (path("users/carol/new"), .object(["a": .int(1)]))],
    ]
    for writes in writeSets {
        let plain = rules.canWrite(writes, data: data, auth: alice, now: now)
        let traced = rules.canWrite(writes, data: data, auth: alice, now: now, explain: true)
        precondition(plain.allowed == traced.allowed, "explain changed a write decision")
        precondition(!plain.explanation.isEmpty)
        let again = rules.canWrite(writes, data: data, auth: alice, now: now)
        precondition(again.allowed == plain.allowed, "write decision not repeatable")
    }
}

/// The rules compiled for coverage against the plain ones: the same decisions, and sites
/// that point into the file (`fileBytes`; nil when compiled from parsed JSON).
func checkCoverage(_ rules: RuleSet, fileBytes: Int?) {
    guard let probed = try? rules.withCoverage(), let coverage = probed.coverage else { return }
    let data = fixedTree()
    let alice: JSONValue = .object(["uid": "alice", "provider": "password", "token": .object(["admin": .bool(true)])])
    let now: Int64 = 1_700_000_000_000
    for target in ["", "users/alice/favorites/f1", "public", "nowhere"] {
        for who in [alice, JSONValue.null] {
            let plain = rules.canRead(path(target), data: data, auth: who, now: now, query: nil, explain: true)
            precondition(probed.canRead(path(target), data: data, auth: who, now: now, query: nil, explain: true) == plain,
                         "coverage probes changed a read decision")
            precondition(probed.readAllowedWithoutData(path(target), auth: who, now: now)
                         == rules.readAllowedWithoutData(path(target), auth: who, now: now), "coverage changed a read without data")
        }
    }
    let writes: [(path: DataPath, value: JSONValue?)] = [(path("users/alice/name"), "Al"), (path("public"), .object(["a": .int(1)]))]
    precondition(probed.canWrite(writes, data: data, auth: alice, now: now, explain: true)
                 == rules.canWrite(writes, data: data, auth: alice, now: now, explain: true), "coverage probes changed a write decision")
    precondition(probed.canWriteWithoutData(writes, auth: alice) == rules.canWriteWithoutData(writes, auth: alice),
                 "coverage changed a write decided without data")
    let report = CoverageReport(coverage)
    for entry in report.entries {
        precondition(entry.site.start <= entry.site.end, "a site ends before it starts")
        if let fileBytes { precondition(entry.site.end <= fileBytes && entry.site.line >= 1, "a site outside the file") }
    }
    _ = report.json
}

