import Foundation
import HearthJSON
import Testing
@testable import HearthServer

/// The settings table: layering, validation, and the docs page that must match it.
@Suite struct ServeSettingsTests {
    func resolve(flags: [String: String] = [:], env: [String: String] = [:], file: String? = nil) throws(SettingError) -> HearthConfiguration {
        try ServeSettings.resolve(flags: flags, environment: { env[$0] }, configFile: file.map { try! JSONParser.parse(Array($0.utf8)) })
    }

    @Test func flagsBeatEnvironmentBeatsFileBeatsDefault() throws {
        #expect(try resolve().port == HearthConfiguration.defaultPort)
        #expect(try resolve(file: #"{"port": 7001}"#).port == 7001)
        #expect(try resolve(env: ["HEARTH_PORT": "7002"], file: #"{"port": 7001}"#).port == 7002)
        #expect(try resolve(flags: ["port": "7003"], env: ["HEARTH_PORT": "7002"], file: #"{"port": 7001}"#).port == 7003)
        let many = try resolve(env: ["HEARTH_TRUSTED_PROXIES": "10.0.0.1, 10.0.0.2", "HEARTH_LOG_FORMAT": "JSON"],
                               file: #"{"maxStreams": 5, "synchronous": "normal", "accessLog": false, "streamKeepAliveSeconds": 0.5}"#)
        #expect(many.trustedProxies == ["10.0.0.1", "10.0.0.2"] && many.logging.json && !many.logging.accessLog)
        #expect(many.streams.maxStreams == 5 && many.store.synchronous == .normal && many.streams.keepAliveInterval == 0.5)
        #expect(try resolve(file: #"{"trustedProxies": ["::1"]}"#).trustedProxies == ["::1"])
    }

    @Test func badValuesNameTheirSource() {
        #expect(throws: SettingError(message: "--port must be a whole number in 0...65535")) { try resolve(flags: ["port": "70000"]) }
        #expect(throws: SettingError(message: "HEARTH_SYNCHRONOUS must be one of full, normal")) { try resolve(env: ["HEARTH_SYNCHRONOUS": "sometimes"]) }
        #expect(throws: SettingError(message: "\"maxStreams\" in the config file must be a whole number in 1...1000000")) { try resolve(file: #"{"maxStreams": 0}"#) }
        #expect(throws: SettingError(message: "\"accessLog\" in the config file must be true or false")) { try resolve(file: #"{"accessLog": 3}"#) }
        #expect(throws: SettingError.self) { try resolve(file: #"{"prot": 1}"#) }
        #expect(throws: SettingError.self) { try resolve(file: "[1]") }
    }

    /// A bad value is refused even where a higher source overrides it: the config file's
    /// under an environment variable or a flag, the environment's under a flag.
    @Test func aBadValueAHigherSourceOverridesIsRefusedToo() {
        #expect(throws: SettingError(message: "\"port\" in the config file must be a whole number in 0...65535")) {
            try resolve(flags: ["port": "0"], file: #"{"port": 0.5}"#)
        }
        #expect(throws: SettingError(message: "\"acceptEmulatorOwner\" in the config file must be true or false")) {
            try resolve(env: ["HEARTH_ACCEPT_EMULATOR_OWNER": "false"], file: #"{"acceptEmulatorOwner": "maybe"}"#)
        }
        #expect(throws: SettingError(message: "HEARTH_PORT must be a whole number in 0...65535")) {
            try resolve(flags: ["port": "0"], env: ["HEARTH_PORT": "eighty"])
        }
    }

    /// The long-poll bounds are serve settings: set, and refused past their
    /// ranges (a hold of 25 s or more would outlast the SDK's own poll timeout).
    @Test func longPollLimitsAreSettings() throws {
        let set = try resolve(env: ["HEARTH_LONG_POLL_MAX_SESSIONS": "7", "HEARTH_LONG_POLL_HOLD_SECONDS": "2.5"],
                              file: #"{"longPollMaxPendingBytes": 65536, "longPollIdleSeconds": 90}"#)
        #expect(set.wire.longPoll.maxSessions == 7 && set.wire.longPoll.pollHoldSeconds == 2.5)
        #expect(set.wire.longPoll.maxPendingBytes == 65536 && set.wire.longPoll.sessionIdleSeconds == 90)
        #expect(try resolve().wire.longPoll == LongPollLimits())
        #expect(throws: SettingError.self) { try resolve(env: ["HEARTH_LONG_POLL_HOLD_SECONDS": "25"]) }
        #expect(throws: SettingError.self) { try resolve(env: ["HEARTH_LONG_POLL_IDLE_SECONDS": "10"]) }
        #expect(throws: SettingError.self) { try resolve(env: ["HEARTH_LONG_POLL_MAX_SESSIONS": "0"]) }
    }

    @Test func everySettingHasDistinctNames() {
        let all = ServeSettings.all
        #expect(Set(all.map(\.key)).count == all.count)
        #expect(Set(all.map(\.environment)).count == all.count)
        #expect(all.allSatisfy { $0.environment.hasPrefix("HEARTH_") })
    }

    @Test func theDocsPageMatchesTheTable() throws {
        let docs = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../docs/configuration.md").standardized
        let text = try String(contentsOf: docs, encoding: .utf8)
        let begin = try #require(text.range(of: "<!-- settings-table:begin -->\n"))
        let end = try #require(text.range(of: "\n<!-- settings-table:end -->"))
        #expect(String(text[begin.upperBound..<end.lowerBound]) == ServeSettings.markdownTable(),
                "docs/configuration.md is out of date: regenerate the table with `hearth config-docs`")
    }
}
