import HearthAuth
import HearthHTTPClient

/// Why a mail was not delivered. `transient` ones are retried (`Mailer`).
public enum MailError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Connection refused, reset, timed out, or a 4xx answer.
    case transient(String)
    /// A 5xx answer, or the server lacks what is needed (STARTTLS, AUTH): retrying will not help.
    case permanent(String)

    public var description: String {
        switch self {
        case .transient(let why): return "temporary: \(why)"
        case .permanent(let why): return "permanent: \(why)"
        }
    }

    public var isTransient: Bool { if case .transient = self { return true } else { return false } }
}

/// One SMTP conversation (RFC 5321) that delivers one message: blocking, with a timeout on
/// every read and write; run it off the request path (`Mailer`). The password never
/// reaches an error text.
public struct SMTPClient: Sendable {
    /// Seconds for the connect and for each read or write.
    public static let timeoutSeconds = 20
    /// The longest reply accepted (all lines together).
    public static let maxReplyBytes = 64 * 1024

    public let settings: SMTPSettings
    /// The name given in `EHLO`.
    public let helloName: String

    public init(settings: SMTPSettings, helloName: String = "hearth.localdomain") {
        self.settings = settings
        self.helloName = helloName
    }

    public func send(_ message: MailMessage, date: String, messageID: String) throws(MailError) {
        guard MailMessage.isPlainAddress(message.to) else { throw .permanent("not a plain address") }
        let socket: OutgoingConnection
        do {
            socket = try OutgoingConnection(host: settings.host, port: settings.port, timeoutSeconds: Self.timeoutSeconds)
        } catch {
            throw .transient("\(error)")
        }
        var connection = Connection(socket: socket)
        defer { connection.close() }
        try connection.expect(220)
        var features = try connection.command("EHLO \(helloName)", expect: 250)
        if settings.security == .startTLS {
            guard features.contains(where: { $0.uppercased().hasPrefix("STARTTLS") }) else {
                throw .permanent("the server does not offer STARTTLS")
            }
            _ = try connection.command("STARTTLS", expect: 220)
            try connection.startTLS(host: settings.host, caFile: settings.caFile)
            features = try connection.command("EHLO \(helloName)", expect: 250)
        }
        if let username = settings.username {
            guard features.contains(where: { $0.uppercased().hasPrefix("AUTH") && $0.uppercased().contains("PLAIN") }) else {
                throw .permanent("the server does not offer AUTH PLAIN")
            }
            let credentials = Base64.encode(Array("\0\(username)\0\(settings.password ?? "")".utf8))
            _ = try connection.command("AUTH PLAIN \(credentials)", expect: 235)
        }
        _ = try connection.command("MAIL FROM:<\(settings.from)>", expect: 250)
        _ = try connection.command("RCPT TO:<\(message.to)>", expect: 250, also: 251)
        _ = try connection.command("DATA", expect: 354)
        try connection.write(message.rendered(from: settings.from, date: date, messageID: messageID) + Array(".\r\n".utf8))
        try connection.expect(250)
        _ = try? connection.command("QUIT", expect: 221)
    }

    /// The socket (TLS over it after STARTTLS) and the bytes read but not used yet.
    struct Connection {
        let socket: OutgoingConnection
        var buffer: [UInt8] = []

        init(socket: OutgoingConnection) { self.socket = socket }

        func close() { socket.close() }

        func startTLS(host: String, caFile: String?) throws(MailError) {
            do {
                try socket.startTLS(host: host, caFile: caFile)
            } catch {
                throw .permanent("\(error)")
            }
        }

        func write(_ bytes: [UInt8]) throws(MailError) {
            do { try socket.write(bytes) } catch { throw .transient(error == .timeout ? "write timed out" : "\(error)") }
        }

        mutating func fill() throws(MailError) {
            var chunk = [UInt8](repeating: 0, count: 4096)
            let count: Int
            do { count = try socket.read(into: &chunk) } catch { throw .transient(error == .timeout ? "read timed out" : "\(error)") }
            guard count > 0 else { throw .transient("the server closed the connection") }
            buffer.append(contentsOf: chunk[0..<count])
            guard buffer.count <= SMTPClient.maxReplyBytes else { throw .permanent("reply too long") }
        }

        /// One reply (RFC 5321 §4.2: `NNN-text` lines, then `NNN text`): its code and texts.
        mutating func reply() throws(MailError) -> (code: Int, lines: [String]) {
            var lines: [String] = []
            while true {
                while !buffer.contains(UInt8(ascii: "\n")) { try fill() }
                let end = buffer.firstIndex(of: UInt8(ascii: "\n"))!
                var line = Array(buffer[..<end])
                buffer.removeFirst(end + 1)
                if line.last == UInt8(ascii: "\r") { line.removeLast() }
                guard line.count >= 3, let code = Int(String(decoding: line[0..<3], as: UTF8.self)) else {
                    throw .permanent("not an SMTP reply")
                }
                lines.append(String(decoding: line.dropFirst(4), as: UTF8.self))
                if line.count == 3 || line[3] == UInt8(ascii: " ") { return (code, lines) }
            }
        }

        /// Errors name the command's verb and the reply's code (with its enhanced status
        /// code, "5.1.1"), never the reply's text or the command's arguments: those carry
        /// addresses, and errors reach the log.
        mutating func expect(_ wanted: Int, also: Int? = nil, after what: String = "the greeting") throws(MailError) -> [String] {
            let (code, lines) = try reply()
            if code == wanted || code == also { return lines }
            let status = lines.last.flatMap { $0.split(separator: " ").first }.map(String.init)
                .flatMap { $0.allSatisfy { $0.isNumber || $0 == "." } && $0.contains(".") ? " " + $0 : nil } ?? ""
            let text = "\(what) answered \(code)\(status)"
            throw code >= 400 && code < 500 ? .transient(text) : .permanent(text)
        }

        mutating func expect(_ wanted: Int) throws(MailError) {
            _ = try expect(wanted, also: nil)
        }

        @discardableResult
        mutating func command(_ line: String, expect wanted: Int, also: Int? = nil) throws(MailError) -> [String] {
            try write(Array((line + "\r\n").utf8))
            return try expect(wanted, also: also, after: String(line.prefix { $0 != " " && $0 != ":" }))
        }
    }
}
