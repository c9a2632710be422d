import HearthJSON
import Testing
@testable import HearthServer

/// The REST request options (`QueryOptions`, docs/rest.md): each value Firebase takes,
/// and a clear 400 for one it would refuse, `timeout` and `writeSizeLimit` included though
/// Hearth acts on neither; parameters it does not know are ignored.
@Suite struct QueryOptionsTests {
    func refusal(_ query: String) -> String? {
        do {
            _ = try QueryOptions(query: query)
            return nil
        } catch {
            return error.message
        }
    }

    @Test func printFormatAndShallowTakeTheirValuesOnly() throws {
        #expect(try QueryOptions(query: "print=pretty").print == .pretty)
        #expect(try QueryOptions(query: "print=silent").print == .silent)
        #expect(try QueryOptions(query: "format=export").export)
        #expect(try QueryOptions(query: "shallow=true").shallow)
        #expect(try !QueryOptions(query: "shallow=false").shallow)
        #expect(refusal("print=loud") == "print must be 'pretty' or 'silent'")
        #expect(refusal("format=strict") == "format must be 'export'")
        #expect(refusal("shallow=yes") == "shallow must be 'true' or 'false'")
        #expect(refusal("shallow=TRUE") == "shallow must be 'true' or 'false'")
        #expect(refusal("auth_variable_override=5") == "auth_variable_override must be a JSON object or null")
    }

    /// `timeout`: a whole number of ms, s or min, from 1 ms to 15 min, each edge crossed.
    @Test func timeoutIsCheckedUpToFifteenMinutes() {
        let limit = "timeout must be a whole number of ms, s or min (500ms, 3s, 2min), from 1ms to 15min"
        for taken in ["1ms", "500ms", "3s", "2min", "15min", "900s", "900000ms", "0001s", "000000000000000000000001s"] {
            #expect(refusal("timeout=" + taken) == nil, "\(taken)")
        }
        for refused in ["16min", "901s", "900001ms", "0ms", "0min", "abc", "3", "s", "3 s", "-3s", "3.5s", "3S", "3m", "3sec",
                        "99999999999s", "9223372036854775807ms", "922337203685477580min", "99999999999999999999ms", ""] {
            #expect(refusal("timeout=" + refused) == limit, "\(refused)")
        }
        #expect(QueryOptions.maxTimeoutMilliseconds == 900_000)
    }

    @Test func writeSizeLimitTakesFirebasesFiveValues() {
        for taken in QueryOptions.writeSizeLimits {
            #expect(refusal("writeSizeLimit=" + taken) == nil, "\(taken)")
        }
        #expect(QueryOptions.writeSizeLimits == ["tiny", "small", "medium", "large", "unlimited"])
        for refused in ["huge", "Tiny", "", "1000"] {
            #expect(refusal("writeSizeLimit=" + refused) == "writeSizeLimit must be tiny, small, medium, large or unlimited", "\(refused)")
        }
    }

    /// Cache busters and options Hearth does not know are ignored, as Firebase ignores them.
    @Test func unknownParametersAreIgnored() throws {
        #expect(try QueryOptions(query: "_=1764000000000&ns=demo&disableTriggers=true") == QueryOptions(query: nil))
    }

    /// Through the router: the 400's body names the parameter.
    @Test func aBadOptionIsA400() async throws {
        let h = try RouterHarness()
        let read = await h.send("GET", "/a.json?timeout=1h")
        #expect(read.status == 400)
        #expect(read.errorMessage?.hasPrefix("timeout must be") == true, "\(read.text)")
        let write = await h.send("PUT", "/a.json?writeSizeLimit=huge", "1")
        #expect(write.status == 400)
        #expect(await h.send("GET", "/a.json").text == "null", "nothing was written")
        #expect(await h.send("PUT", "/a.json?writeSizeLimit=unlimited&timeout=3s", "1").status == 200)
    }
}
