import Foundation
import HearthTesting
import Testing

/// The log lines `hearth serve` writes (its `HearthLogHandler`), in both formats: an access
/// line carries its fields in key order (human) or as members (json), with an RFC 3339
/// UTC time to the millisecond written digit by digit.
@Suite struct LogFormatEndToEndTests {
    let dir = TemporaryDirectory()

    /// Whether `text` has the shape `2026-11-27T03:33:12.019Z`.
    static func isTime(_ text: some StringProtocol) -> Bool {
        let shape = Array("0000-00-00T00:00:00.000Z".utf8)
        let bytes = Array(text.utf8)
        guard bytes.count == shape.count else { return false }
        return zip(bytes, shape).allSatisfy { byte, expected in
            expected == UInt8(ascii: "0") ? (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) : byte == expected
        }
    }

    func serve(format: String) throws -> HearthProcess {
        let rules = try HearthProcess.writeRules(HearthProcess.openRules, in: dir.path)
        let hearth = try HearthProcess(
            arguments: ["serve", "--port", "0", "--data-dir", dir.path, "--rules", rules, "--log-format", format],
            dataDirectory: dir.path)
        try hearth.waitUntilListening()
        return hearth
    }

    /// The line holding `marker`, once it is written.
    func line(_ hearth: HearthProcess, containing marker: String) throws -> String {
        try hearth.waitForLog(marker, count: 1)
        return String(hearth.log.split(separator: "\n").first { $0.contains(marker) } ?? "")
    }

    /// Seconds between `text` (the log's time) and now.
    static func age(_ text: Substring) -> Double {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        guard let date = formatter.date(from: String(text)) else { return .infinity }
        return abs(date.timeIntervalSinceNow)
    }

    @Test func humanLinesHaveTheTimeThenTheFieldsInKeyOrder() throws {
        let started = Date()
        let hearth = try serve(format: "human")
        #expect(try curl("GET", hearth.baseURL + "/human-1.json").status == 200)
        let access = try line(hearth, containing: "path=/human-1.json")
        let words = access.split(separator: " ")
        let stamp = try #require(words.first)
        #expect(Self.isTime(stamp), "\(access)")
        #expect(Self.age(stamp) <= Date().timeIntervalSince(started) + 1)
        #expect(words.dropFirst().prefix(5).joined(separator: " ") == "info hearth: GET /human-1.json 200")
        let keys = words.dropFirst(6).compactMap { $0.split(separator: "=", maxSplits: 1).first.map(String.init) }
        // `ns`: the database the request reached (the default's label).
        #expect(keys == ["bytes", "client", "log", "method", "ms", "ns", "path", "request_id", "status"], "\(access)")
        #expect(access.hasSuffix(" status=200") && access.contains(" log=access ") && access.contains(" method=GET ")
                && access.contains(" ns=(default) "), "\(access)")
    }

    @Test func jsonLinesCarryTheTimeAndEveryField() throws {
        let started = Date()
        let hearth = try serve(format: "json")
        #expect(try curl("GET", hearth.baseURL + "/json-1.json").status == 200)
        let access = try line(hearth, containing: #""path":"/json-1.json""#)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(access.utf8)) as? [String: String])
        let stamp = try #require(object["time"])
        #expect(Self.isTime(stamp), "\(access)")
        #expect(Self.age(Substring(stamp)) <= Date().timeIntervalSince(started) + 1)
        #expect(object["level"] == "info" && object["log"] == "access" && object["status"] == "200" && object["path"] == "/json-1.json")
    }
}
