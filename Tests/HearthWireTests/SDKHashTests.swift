import HearthJSON
import Testing
@testable import HearthWire

/// The vectors of docs/protocol/wire.md §4.4: each is what the official JS SDK sent as `h`.
@Suite("Wire: the SDK hash")
struct SDKHashTests {
    @Test(arguments: [
        ("1", "YPVfR2bXt/lcDjiQZ8pOkAd3qkQ="),
        ("-0.1", "oitgJDeppZIiewMsaFVmsuLwrEc="),
        ("1e21", "rZwDOBGJ9Z0+flzyrCWzeSigSyE="),
        ("true", "E5z61QM0lN/U2WsOnusszCTkR8M="),
        (#""héllo ✓ 𝄞""#, "4iGnRdoGqaKyq4GOekyBDenoO3g="),
        (#"{"b":1,"a":"x","10":true,"2":false,"-1":0.5,"007":"s","Z":{"y":[1,2,{"q":null,"r":"r"}]}}"#, "56vK2G3ngonUjYPRB1OOEDpJpaE="),
        (#"{"c":1,"a":{".value":"A",".priority":5},"b":{"x":1,".priority":"p"}}"#, "Hbk0Hp5B9uhsvZ15zhQ+dsQZIAE="),
    ])
    func theSpecsVectors(json: String, expected: String) throws {
        #expect(SDKHash.hash(try JSONParser.parse(json)) == expected)
    }

    @Test func preimagesAreTheSpecs() throws {
        #expect(SDKHash.preimage(.int(1)) == "number:3ff0000000000000")
        #expect(SDKHash.preimage(.double(-0.1)) == "number:bfb999999999999a")
        #expect(SDKHash.preimage(.bool(true)) == "boolean:true")
        #expect(SDKHash.preimage(try JSONParser.parse(#"{".value":"A",".priority":5}"#)) == "priority:number:4014000000000000:string:A")
    }

    @Test func emptyNodesHashToTheEmptyString() throws {
        #expect(SDKHash.hash(.null) == "")
        #expect(SDKHash.hash(JSONValue.object([JSONKey: JSONValue]())) == "")
        #expect(SDKHash.hash(try JSONParser.parse(#"{"a":null,"b":{}}"#)) == "")
    }

    @Test func integersHashAsJavaScriptDoubles() {
        #expect(SDKHash.hash(.int(9_007_199_254_740_993)) == SDKHash.hash(.int(9_007_199_254_740_992)))
        #expect(SDKHash.hash(.int(3)) == SDKHash.hash(.double(3)))
    }
}
