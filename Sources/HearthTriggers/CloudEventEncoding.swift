import COpenSSL
import HearthHTTPClient
import HearthJSON
import HearthSystem

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

    /// `2026-11-26T17:38:01.123Z`: UTC, milliseconds always written (`CivilTime`). Years
    /// below 1000 get leading zeros; years past 9999 are written in full.
    public static func rfc3339(milliseconds: Int64) -> String {
        let time = CivilTime(milliseconds: milliseconds)
        var text: [UInt8] = []
        text.reserveCapacity(24)
        func append(_ value: Int64, digits: Int, then separator: Unicode.Scalar) {
            var divisor: Int64 = 1
            for _ in 1..<digits { divisor *= 10 }
            while divisor > 0 {
                text.append(UInt8(ascii: "0") + UInt8(value / divisor % 10))
                divisor /= 10
            }
            text.append(UInt8(ascii: separator))
        }
        if time.year >= 0 && time.year <= 9999 {
            append(time.year, digits: 4, then: "-")
        } else {
            text += Array("\(time.year)-".utf8)
        }
        append(time.month, digits: 2, then: "-")
        append(time.day, digits: 2, then: "T")
        append(time.hour, digits: 2, then: ":")
        append(time.minute, digits: 2, then: ":")
        append(time.second, digits: 2, then: ".")
        append(time.millisecond, digits: 3, then: "Z")
        return String(decoding: text, as: UTF8.self)
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
