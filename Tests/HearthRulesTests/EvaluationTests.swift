import HearthJSON
@testable import HearthRules
import Testing

/// Evaluation semantics beyond the corpus (docs/protocol/rules.md §3.2–§3.5).
@Suite struct EvaluationTests {
    static let empty = JSONTreeSource(nil)

    static func read(_ rules: RuleSet, _ target: String, data: JSONValue? = nil, uid: String? = nil, query: RuleQuery? = nil, explain: Bool = false) -> RuleDecision {
        rules.canRead(path(target), data: JSONTreeSource(data), auth: auth(uid), now: testNow, query: query, explain: explain)
    }

    static func rule(_ expression: String) -> RuleSet {
        let escaped = expression.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
        return compile(#"{"rules": {".read": "\#(escaped)"}}"#)
    }

    @Test func emptyRulesDenyEverything() {
        let rules = compile(#"{"rules": {}}"#)
        #expect(!Self.read(rules, "").allowed)
        #expect(!Self.read(rules, "a/b").allowed)
        #expect(!rules.canWrite([(path("a"), .int(1))], data: Self.empty, auth: auth("u"), now: testNow).allowed)
        #expect(!rules.canWrite([(path("a"), nil)], data: Self.empty, auth: auth("u"), now: testNow).allowed)
        #expect(!rules.canWrite([], data: Self.empty, auth: auth("u"), now: testNow).allowed)
    }

    @Test func explanationNamesEveryRuleAndTheDecision() {
        let rules = compile("""
        {"rules": {
          ".read": "auth.token.admin == true",
          "users": {"$uid": {".read": "auth.token.dreams.length > 1", "notes": {".read": "auth.uid == $uid"}}}
        }}
        """)
        let decision = Self.read(rules, "users/alice/notes", uid: "alice", explain: true)
        #expect(decision.allowed)
        #expect(decision.explanation == [
            "/rules/.read at / → false",
            "/rules/users/$uid/.read at /users/alice: error: length of a value that is not a string → false",
            "/rules/users/$uid/notes/.read at /users/alice/notes → true",
            "read of /users/alice/notes allowed by /rules/users/$uid/notes/.read",
        ])
        let denied = Self.read(rules, "users/alice/notes", uid: "bob")
        #expect(!denied.allowed)
        #expect(denied.explanation == ["read of /users/alice/notes denied: no .read rule on the path granted it"])
    }

    @Test func writeExplanationNamesTheFailedValidate() {
        let rules = compile(#"{"rules": {"a": {".write": true, "$k": {".validate": "newData.isNumber()"}}}}"#)
        let decision = rules.canWrite([(path("a"), .object(["x": .int(1), "y": "no"]))], data: Self.empty, auth: .null, now: testNow, explain: true)
        #expect(!decision.allowed)
        #expect(decision.explanation == [
            "/rules/a/.write at /a → true",
            "/rules/a/$k/.validate at /a/x → true",
            "/rules/a/$k/.validate at /a/y → false",
            "write to /a denied: /rules/a/$k/.validate at /a/y failed",
        ])
    }

    /// An erroring rule is false only for its own node: a deeper rule still grants.
    @Test func errorDoesNotBlockADeeperGrant() {
        let rules = compile(#"{"rules": {".read": "auth.uid.length > 0", "open": {".read": true}}}"#)
        #expect(Self.read(rules, "open").allowed)
        #expect(!Self.read(rules, "closed").allowed)
        #expect(Self.read(rules, "closed", uid: "u").allowed)
    }

    struct Truth: Sendable, CustomTestStringConvertible {
        let expression: String
        let allowed: Bool
        init(_ expression: String, _ allowed: Bool) {
            self.expression = expression
            self.allowed = allowed
        }
        var testDescription: String { expression }
    }

    /// Expressions over a fixed tree and auth, each true (allow) or false/error (deny).
    @Test(arguments: [
        Truth("(0.1 + 0.2) + '' == '0.30000000000000004'", true),
        Truth("(1e21 + '') == '1e+21'", true),
        Truth("(123456789012 + '') == '123456789012'", true),
        Truth("(0.000001 + '') == '0.000001'", true),
        Truth("(1e-7 + '') == '1e-7'", true),
        Truth("(-1.5 + '') == '-1.5'", true),
        Truth("(-0 + '') == '0'", true),
        Truth("(1 / 0) != (1 / 0)", true),
        Truth("(0 / 0 + '') == 'NaN'", true),
        Truth("(7 % 3) == 1 && (-7 % 3) == -1", true),
        Truth("(1e308 * 10 + '') == 'Infinity'", true),
        Truth("'b' > 'a' && 'B' < 'a' && 'ab' > 'a'", true),
        Truth("auth.uid < 1", false),
        Truth("auth.token.missing < 1", false),
        Truth("'abc'.length == 3 && '😀'.length == 2", true),
        Truth("'aXbXc'.replace('X', '-') == 'a-b-c'", true),
        Truth("'abc'.replace('', '-') == 'abc'", true),
        Truth("'Hello'.toUpperCase() == 'HELLO' && 'Hello'.toLowerCase() == 'hello'", true),
        Truth("'hello'.beginsWith('he') && 'hello'.endsWith('lo') && 'hello'.contains('ell')", true),
        Truth("'hello'.contains('')", true),
        Truth("'é'.contains('e')", false),
        Truth("root.child('users/alice/name').val() == 'Alice'", true),
        Truth("root.child('users').child('alice').child('name').val() == 'Alice'", true),
        Truth("root.child('/users//alice/').child('name').exists()", true),
        Truth("root.child('users').val() != null", true),
        Truth("root.child('users').val() == root.child('users').val()", false),
        Truth("root.child('users/alice/age').isNumber() && root.child('users/alice/name').isString() && root.child('users/alice/admin').isBoolean()", true),
        Truth("root.child('users/alice').isString()", false),
        Truth("root.child('users/alice/name/deeper').exists()", false),
        Truth("root.child('users/alice').hasChildren() && !root.child('users/alice/name').hasChildren()", true),
        Truth("root.child('users/alice').hasChildren(['name', 'age'])", true),
        Truth("root.child('users/alice').hasChildren(['name', 'nope'])", false),
        Truth("root.child('users/alice').hasChild('name') && !root.child('users/alice').hasChild('nope')", true),
        Truth("root.child('users/alice/name').parent().parent().parent().child('users/alice/age').val() == 30", true),
        Truth("root.child('users/alice').parent().parent().exists()", true),
        Truth("root.child('users/alice').parent().parent().parent().exists()", false),
        Truth("root.child('a.b').exists() == false && root.child('a#b/c').parent().exists() == false", true),
        Truth("root.child('users/a.b').parent().exists()", true),
        Truth("root.child('users/alice/name').getPriority() == null", true),
        Truth("auth.token.roles.admin == true && auth.token['roles']['admin'] == true", true),
        Truth("auth.token.list[1] == 'b' && auth.token.list['0'] == 'a'", true),
        Truth("auth.token.missing.deeper == null", true),
        Truth("auth.uid.nope == null", true),
        Truth("auth.token.roles == auth.token.roles", true),
        Truth("auth.token.roles.length > 0", false),
        Truth("auth.token.list.contains('a')", false),
        Truth("query.orderByKey && !query.orderByValue && query.orderByChild == null && query.limitToFirst == null", true),
        Truth("now == 1700000000000", true),
        Truth("-now < 0", true),
        Truth("true ? true : auth.missing.length > 0", true),
        Truth("false ? auth.missing.length > 0 : true", true),
    ])
    func expressions(_ truth: Truth) {
        let data: JSONValue = .parse(#"{"users": {"alice": {"name": "Alice", "age": 30, "admin": false}}}"#)
        let token: [String: JSONValue] = ["roles": .object(["admin": .bool(true)]), "list": .array(["a", "b"])]
        let rules = Self.rule(truth.expression)
        let decision = rules.canRead(.root, data: JSONTreeSource(data), auth: auth("alice", token: token), now: testNow, query: nil, explain: true)
        #expect(decision.allowed == truth.allowed, "\(decision.explanation)")
    }

    @Test func queryFields() {
        let rules = compile(#"{"rules": {"q": {".read": "query.orderByChild == 'owner' && query.equalTo == 'me' && query.limitToLast == 5 && query.startAt == 1 && query.endAt == true && !query.orderByKey"}}}"#)
        let query = RuleQuery(orderBy: .child("owner"), startAt: .int(1), endAt: .bool(true), equalTo: "me", limitToLast: 5)
        #expect(Self.read(rules, "q", query: query).allowed)
        #expect(!Self.read(rules, "q", query: RuleQuery(orderBy: .child("owner"))).allowed)
        #expect(!Self.read(rules, "q").allowed)
    }

    @Test func indexesFollowWildcards() {
        let rules = compile(#"{"rules": {"a": {".indexOn": "x", "$id": {".indexOn": ["y", "z/w"]}, "named": {".indexOn": ".value"}}}}"#)
        #expect(rules.indexes(at: path("a")) == ["x"])
        #expect(rules.indexes(at: path("a/any")) == ["y", "z/w"])
        #expect(rules.indexes(at: path("a/named")) == [".value"])
        #expect(rules.indexes(at: path("b")) == [])
        #expect(rules.indexes(at: .root) == [])
    }

    struct FailingSource: RuleDataSource {
        struct Failure: Error {}
        func leaf(at path: DataPath) throws -> JSONValue? { throw Failure() }
        func childKeys(at path: DataPath) throws -> [String] { throw Failure() }
        func exists(at path: DataPath) throws -> Bool { throw Failure() }
    }

    /// A store that cannot be read never grants, even where `!` would turn a failure true.
    @Test func dataSourceFailureDenies() {
        let rules = compile(#"{"rules": {".read": "!root.child('banned').exists()", ".write": "!root.child('banned').exists()"}}"#)
        let read = rules.canRead(.root, data: FailingSource(), auth: .null, now: testNow, query: nil)
        #expect(!read.allowed)
        #expect(read.explanation.last?.contains("failed") == true)
        #expect(!rules.canWrite([(path("x"), .int(1))], data: FailingSource(), auth: .null, now: testNow).allowed)
        #expect(Self.read(rules, "").allowed)
    }

    /// `newData` sees the whole update; `root` and `data` see the tree before it.
    @Test func newDataIsTheMergedTreeAndRootIsBefore() {
        let rules = compile("""
        {"rules": {"a": {
          ".write": true,
          "x": {".validate": "newData.parent().child('y').val() == 2 && root.child('a/y').val() == 1 && data.val() == null"}
        }}}
        """)
        let data: JSONValue = .parse(#"{"a": {"y": 1}}"#)
        let both = rules.canWrite([(path("a/x"), .int(5)), (path("a/y"), .int(2))], data: JSONTreeSource(data), auth: .null, now: testNow)
        #expect(both.allowed, "\(both.explanation)")
        let alone = rules.canWrite([(path("a/x"), .int(5))], data: JSONTreeSource(data), auth: .null, now: testNow)
        #expect(!alone.allowed)
    }

    /// A child write granted by a parent still runs the parent's `.validate` with the
    /// merged value, and skips it when the parent disappears.
    @Test func ancestorValidateSeesTheMergedValue() {
        let rules = compile(#"{"rules": {"p": {".write": true, ".validate": "newData.hasChildren(['a', 'b'])"}}}"#)
        let data = JSONTreeSource(.parse(#"{"p": {"a": 1, "b": 2}}"#))
        #expect(rules.canWrite([(path("p/a"), .int(3))], data: data, auth: .null, now: testNow).allowed)
        #expect(!rules.canWrite([(path("p/a"), nil)], data: data, auth: .null, now: testNow).allowed)
        #expect(rules.canWrite([(path("p"), nil)], data: data, auth: .null, now: testNow).allowed)
        #expect(rules.canWrite([(path("p/a"), nil), (path("p/b"), nil)], data: data, auth: .null, now: testNow).allowed)
    }
}

extension EvaluationTests {
    /// Values that were not normalised (an array) are validated in their stored form: no
    /// `.validate` is skipped because the caller passed an array.
    @Test func arraysAreValidatedAsObjects() {
        let rules = compile(#"{"rules": {"list": {".write": true, "$i": {".validate": "newData.isNumber()"}}}}"#)
        let bad: JSONValue = .array([.int(1), .string("two")])
        #expect(!rules.canWrite([(path("list"), bad)], data: Self.empty, auth: .null, now: testNow).allowed)
        #expect(rules.canWrite([(path("list"), .array([.int(1), .int(2)]))], data: Self.empty, auth: .null, now: testNow).allowed)
    }
}

extension EvaluationTests {
    /// A value with a key the store cannot hold is refused, not half-validated.
    @Test func invalidKeyInAWrittenValueDenies() {
        let rules = compile(#"{"rules": {"m": {".write": true, "$k": {".validate": true}}}}"#)
        let decision = rules.canWrite([(path("m"), .object(["a.b": .int(1)]))], data: Self.empty, auth: .null, now: testNow)
        #expect(!decision.allowed)
        #expect(decision.explanation.last?.contains("invalid key") == true)
    }
}
