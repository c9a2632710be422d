import HearthHTTP
import HearthJSON
import Testing
@testable import HearthServer

/// The exact `{"error": …}` texts a REST client gets for bad paths and keys (issue 13 §5):
/// each prefix once (`PathError`'s text already starts "Invalid path: "), sentence case.
@Suite struct ErrorTextTests {
    let h: RouterHarness
    init() throws { h = try RouterHarness() }

    static let forbiddenDot = #"key "a.b" contains .; keys must not contain . $ # [ ] / or control characters"#

    @Test(arguments: [
        ("GET", "/a.b.json", nil, "Invalid path: " + forbiddenDot),
        ("PUT", "/x/a.b.json", "1", "Invalid path: " + forbiddenDot),
        ("POST", "/a.b.json", "1", "Invalid path: " + forbiddenDot),
        ("GET", "/bad%zz.json", nil, #"Invalid path: segment "bad%zz" is not valid percent-encoded UTF-8"#),
        ("PATCH", "/.json", #"{"x/a.b":1}"#, "Invalid path: " + forbiddenDot),
        ("PATCH", "/.json", #"{"//":1}"#, #"Invalid path: update key "//" names no child"#),
        ("PUT", "/x.json", #"{"a.b":1}"#, "Invalid data at /x: " + forbiddenDot),
    ] as [(String, String, String?, String)])
    func pathAndKeyErrors(method: String, target: String, body: String?, text: String) async {
        let response = await h.send(method, target, body)
        #expect(response.status == 400)
        #expect(response.errorMessage == text)
    }

    @Test func tooDeepSaysItOnce() async {
        let path = "/" + (1...DataPath.maxDepth).map { "d\($0)" }.joined(separator: "/") + ".json"
        let response = await h.send("GET", path)
        #expect(response.status == 400)
        #expect(response.errorMessage == "Invalid path: the path is \(DataPath.maxDepth) levels deep; paths must be fewer than \(DataPath.maxDepth) levels deep")
    }

    /// Fixed texts start with a capital letter (texts that start with a parameter or header
    /// name, such as `orderBy must be …`, keep its spelling, as Firebase's do).
    @Test func fixedTextsAreSentences() {
        for error in [APIError.invalidData, .permissionDenied, .internalError, .unavailable, .methodNotAllowed("X")] {
            #expect(error.message.first?.isUppercase == true, "\(error.message)")
        }
    }
}
