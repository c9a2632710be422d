/// One plain-text mail (an email action's link), with the checks that keep header
/// injection out: addresses are single plain addresses, the subject one line.
public struct MailMessage: Sendable, Equatable {
    public var to: String
    public var subject: String
    public var body: String

    public init(to: String, subject: String, body: String) {
        self.to = to
        self.subject = subject
        self.body = body
    }

    /// `local@domain` with no spaces, controls, angle brackets or commas.
    public static func isPlainAddress(_ address: String) -> Bool {
        let parts = address.split(separator: "@", omittingEmptySubsequences: false)
        return parts.count == 2 && !parts[0].isEmpty && !parts[1].isEmpty && address.utf8.count <= 320
            && !address.unicodeScalars.contains { $0.value <= 0x20 || $0.value == 0x7F || "<>,;\"()[]\\".unicodeScalars.contains($0) }
    }

    /// The message as sent after `DATA` (RFC 5322), CRLF line ends, dot-stuffed (RFC 5321
    /// §4.5.2), without the final `.` line.
    public func rendered(from: String, date: String, messageID: String) -> [UInt8] {
        let subjectLine = subject.unicodeScalars.filter { $0.value >= 0x20 && $0.value != 0x7F }.map(String.init).joined()
        var lines = [
            "From: <\(from)>", "To: <\(to)>", "Subject: \(subjectLine)", "Date: \(date)", "Message-ID: <\(messageID)>",
            "MIME-Version: 1.0", "Content-Type: text/plain; charset=utf-8", "Content-Transfer-Encoding: 8bit", "",
        ]
        for line in body.split(omittingEmptySubsequences: false, whereSeparator: { $0 == "\n" || $0 == "\r\n" || $0 == "\r" }) {
            lines.append(line.hasPrefix(".") ? "." + line : String(line))
        }
        return Array((lines.joined(separator: "\r\n") + "\r\n").utf8)
    }
}
