import COpenSSL
import Foundation
import HearthHTTPClient
import HearthJSON

/// Where the events say they come from (the `source`, `instance`, `location` and
/// `firebasedatabasehost` attributes). docs/triggers.md lists the defaults [U].
public struct EventOrigin: Sendable, Equatable {
    /// The database instance: Hearth's `projectId` (default `hearth`) [U].
    public var instance: String
    /// The region Firebase would name; Hearth has none: `us-central1` [U].
    public var location: String
    /// The database's host as clients reach it (`host:port` of the server) [U].
    public var databaseHost: String

    public static let defaultLocation = "us-central1"

    public init(instance: String, location: String = EventOrigin.defaultLocation, databaseHost: String) {
        (self.instance, self.location, self.databaseHost) = (instance, location, databaseHost)
    }

    /// `//firebasedatabase.googleapis.com/projects/_/locations/<location>/instances/<instance>`.
    public var source: String { "//firebasedatabase.googleapis.com/projects/_/locations/\(location)/instances/\(instance)" }
}

/// Why a stored event could not be turned into a request (a payload this module did not
/// write); such an event goes to the dead letters.
public struct UndeliverableEvent: Error, Sendable, CustomStringConvertible {
    public let description: String
}

/// An RTDB CloudEvent (docs/protocol/functions.md §4.6) in the HTTP binding's binary
/// content mode: `ce-*` headers and the JSON body `{"data": before, "delta": change}`; a
/// schedule's due time as Cloud Scheduler sends it (`ScheduledInvocation`).
public enum CloudEventEncoding {
    /// The request delivering the stored event `id` (committed at `at`, ms) with `payload`
    /// (`MatchedEvent.payload`) to `trigger`.
    public static func request(id: String, at: Int64, payload: [UInt8], trigger: TriggerDefinition,
                               origin: EventOrigin) throws(UndeliverableEvent) -> HTTPClientRequest {
        if trigger.schedule != nil { return ScheduledInvocation.request(at: at, trigger: trigger) }
        guard case .object(let members)? = try? JSONParser.parse(payload),
              case .string(let ref)? = members["ref"], case .string(let type)? = members["type"],
              case .string(let authType)? = members["authtype"] else {
            throw UndeliverableEvent(description: "the stored event is not one this version of Hearth wrote")
        }
        let body = JSONWriter.write(.object(["data": members["data"] ?? .null, "delta": members["delta"] ?? .null]))
        var headers: [(name: String, value: String)] = [
            ("ce-specversion", "1.0"), ("ce-type", type), ("ce-source", origin.source),
            ("ce-subject", "refs/\(ref)"), ("ce-id", id), ("ce-time", rfc3339(milliseconds: at)),
            ("ce-instance", origin.instance), ("ce-ref", ref), ("ce-location", origin.location),
            ("ce-firebasedatabasehost", origin.databaseHost), ("ce-authtype", authType),
        ]
        if case .string(let authID)? = members["authid"] { headers.append(("ce-authid", authID)) }
        headers.append(("Content-Type", "application/json"))
        for (name, value) in trigger.headers.sorted(by: { $0.key < $1.key }) { headers.append((name, value)) }
        if let secret = trigger.hmacSecret {
            headers.append((signatureHeader, "sha256=" + hex(hmacSHA256(key: Array(secret.utf8), body))))
        }
        return HTTPClientRequest(method: "POST", url: trigger.url, headers: headers, body: body)
    }

    /// The header carrying the body's HMAC when a trigger has an `hmacSecret`.
    static let signatureHeader = "X-Hearth-Signature"

    /// `2026-11-26T17:38:01.123Z`.
    public static func rfc3339(milliseconds: Int64) -> String {
        let date = Date(timeIntervalSince1970: Double(milliseconds) / 1000)
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        let parts = calendar.dateComponents([.year, .month, .day, .hour, .minute, .second], from: date)
        func two(_ value: Int?) -> String { let text = String(value ?? 0); return text.count < 2 ? "0" + text : text }
        let millis = ((milliseconds % 1000) + 1000) % 1000
        let fraction = String(millis + 1000).dropFirst()
        let year = String(parts.year ?? 1970)
        return "\(String(repeating: "0", count: max(0, 4 - year.count)))\(year)-\(two(parts.month))-\(two(parts.day))T\(two(parts.hour)):\(two(parts.minute)):\(two(parts.second)).\(fraction)Z"
    }

    /// HMAC-SHA256 (RFC 2104) through libcrypto's one-shot `EVP_Q_mac`.
    static func hmacSHA256(key: [UInt8], _ message: [UInt8]) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: 32)
        var length = 0
        let status = key.withUnsafeBytes { keyBuffer in
            message.withUnsafeBytes { messageBuffer in
                out.withUnsafeMutableBytes { outBuffer in
                    EVP_Q_mac(nil, "HMAC", nil, "SHA256", nil, keyBuffer.baseAddress, keyBuffer.count,
                              messageBuffer.baseAddress?.assumingMemoryBound(to: UInt8.self), messageBuffer.count,
                              outBuffer.baseAddress?.assumingMemoryBound(to: UInt8.self), outBuffer.count, &length)
                }
            }
        }
        precondition(status != nil && length == 32, "EVP_Q_mac(HMAC-SHA256) failed")
        return out
    }

    static func hex(_ bytes: [UInt8]) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var text: [UInt8] = []
        for byte in bytes { text += [digits[Int(byte >> 4)], digits[Int(byte & 0xF)]] }
        return String(decoding: text, as: UTF8.self)
    }
}
