import Foundation
import HearthTesting
import Testing

/// Email actions over real SMTP, against the built binary and an
/// aiosmtpd server on loopback (`SMTPSink`): the mail carries a link with the code; the
/// code resets the password or verifies the address once; STARTTLS with AUTH; a temporary
/// failure is retried; without SMTP a clear error and the operator's `reset-link`.
@Suite struct EmailActionsEndToEndTests {
    let dir = TemporaryDirectory()
    static let linkBase = "https://app.example.com/auth/action"
    static let rules = #"{"rules": {"verified": {".read": "auth != null && auth.token.email_verified === true"}}}"#

    func post(_ url: String, _ body: String) throws -> (status: Int, json: [String: Any]) {
        let result = try curl("POST", url, body: body, headers: ["Content-Type: application/json"])
        return (result.status, (json(result.body) as? [String: Any]) ?? [:])
    }

    static func error(_ json: [String: Any]) -> String? { (json["error"] as? [String: Any])?["message"] as? String }

    func serve(smtp: String?, extra: [String: String] = [:]) throws -> HearthProcess {
        var environment = extra
        if let smtp {
            environment["HEARTH_SMTP_URL"] = smtp
            environment["HEARTH_MAIL_FROM"] = "accounts@app.example.com"
            environment["HEARTH_ACTION_LINK_BASE"] = Self.linkBase
        }
        return try HearthProcess.serve(dataDirectory: dir.path, rules: Self.rules, environment: environment)
    }

    @Test func aPasswordResetMailLeadsToANewPassword() throws {
        let sink = try SMTPSink(python: try pythonInterpreter())
        let server = try serve(smtp: "smtp://127.0.0.1:\(sink.port)")
        let base = server.baseURL
        let up = try post(base + "/v1/accounts:signUp", #"{"email":"Ann@Example.com","password":"old-secret","returnSecureToken":true}"#)
        let oldToken = try #require(up.json["idToken"] as? String)

        // An unknown address is answered the same, and gets no mail (the next mail is Ann's).
        let unknown = try post(base + "/v1/accounts:sendOobCode", #"{"requestType":"PASSWORD_RESET","email":"nobody@example.com"}"#)
        #expect(unknown.status == 200 && unknown.json["kind"] as? String == "identitytoolkit#GetOobConfirmationCodeResponse")
        let sent = try post(base + "/v1/accounts:sendOobCode", #"{"requestType":"PASSWORD_RESET","email":"ann@example.com"}"#)
        #expect(sent.status == 200 && sent.json["email"] as? String == "ann@example.com")
        let mail = try sink.nextMail()
        #expect(mail.to == ["ann@example.com"])
        #expect(mail.data.contains("Subject: Reset your password for hearth"))
        #expect(mail.data.contains(Self.linkBase + "?mode=resetPassword&oobCode="))
        let code = try #require(mail.oobCode)

        // Checking the code does not use it; using it sets the password once.
        let check = try post(base + "/v1/accounts:resetPassword", #"{"oobCode":"\#(code)"}"#)
        #expect(check.status == 200 && check.json["email"] as? String == "ann@example.com" && check.json["requestType"] as? String == "PASSWORD_RESET")
        let reset = try post(base + "/v1/accounts:resetPassword", #"{"oobCode":"\#(code)","newPassword":"new-secret"}"#)
        #expect(reset.status == 200, "\(reset.json)")
        let again = try post(base + "/v1/accounts:resetPassword", #"{"oobCode":"\#(code)","newPassword":"other-secret"}"#)
        #expect(Self.error(again.json) == "INVALID_OOB_CODE")
        #expect(try post(base + "/v1/accounts:signInWithPassword", #"{"email":"ann@example.com","password":"new-secret"}"#).status == 200)
        #expect(Self.error(try post(base + "/v1/accounts:signInWithPassword", #"{"email":"ann@example.com","password":"old-secret"}"#).json) == "INVALID_LOGIN_CREDENTIALS")
        // The reset signed the old sessions out.
        #expect(Self.error(try post(base + "/v1/accounts:lookup", #"{"idToken":"\#(oldToken)"}"#).json) == "TOKEN_EXPIRED")
        #expect(Self.error(try post(base + "/v1/accounts:resetPassword", #"{"oobCode":"made-up","newPassword":"x-secret"}"#).json) == "INVALID_OOB_CODE")
        // The legacy route reaches the same handler.
        #expect(try post(base + "/identitytoolkit/v3/relyingparty/getOobConfirmationCode", #"{"requestType":"PASSWORD_RESET","email":"ann@example.com"}"#).status == 200)
        #expect(try sink.nextMail().to == ["ann@example.com"])
        // The link's code never reaches the log.
        #expect(!server.log.contains(code))
    }

    @Test func verifyingTheEmailIsSeenByTheRules() throws {
        let sink = try SMTPSink(python: try pythonInterpreter())
        let server = try serve(smtp: "smtp://127.0.0.1:\(sink.port)")
        let base = server.baseURL
        let up = try post(base + "/v1/accounts:signUp", #"{"email":"vi@example.com","password":"secret1","returnSecureToken":true}"#)
        let token = try #require(up.json["idToken"] as? String), refresh = try #require(up.json["refreshToken"] as? String)
        #expect(try curl("GET", base + "/verified.json?auth=\(token)").status == 401)
        #expect(try post(base + "/v1/accounts:sendOobCode", #"{"requestType":"VERIFY_EMAIL","idToken":"\#(token)"}"#).status == 200)
        let mail = try sink.nextMail()
        #expect(mail.data.contains("mode=verifyEmail"))
        let verified = try post(base + "/v1/accounts:update", #"{"oobCode":"\#(try #require(mail.oobCode))"}"#)
        #expect(verified.status == 200 && verified.json["emailVerified"] as? Bool == true, "\(verified.json)")
        // A password-only account keeps its session through the verification: the app
        // refreshes its token and the rules see the verified address.
        let refreshed = try post(base + "/v1/token", #"{"grant_type":"refresh_token","refresh_token":"\#(refresh)"}"#)
        let fresh = try #require(refreshed.json["id_token"] as? String)
        #expect(try curl("GET", base + "/verified.json?auth=\(fresh)").status == 200)
        #expect(Self.error(try post(base + "/v1/accounts:update", #"{"oobCode":"\#(mail.oobCode ?? "")"}"#).json) == "INVALID_OOB_CODE")
    }

    @Test func aTemporaryFailureIsRetried() throws {
        let sink = try SMTPSink(python: try pythonInterpreter(), arguments: ["--fail-first", "2"])
        let server = try serve(smtp: "smtp://127.0.0.1:\(sink.port)")
        _ = try post(server.baseURL + "/v1/accounts:signUp", #"{"email":"re@example.com","password":"secret1"}"#)
        #expect(try post(server.baseURL + "/v1/accounts:sendOobCode", #"{"requestType":"PASSWORD_RESET","email":"re@example.com"}"#).status == 200)
        #expect(try sink.nextMail().to == ["re@example.com"])
        try server.waitForLog("email action mail sent (Reset your, 3 attempt(s))", count: 1)
    }

    @Test func startTLSWithAuthAndAnUntrustedCertificate() throws {
        let tls = TemporaryDirectory()
        let sink = try SMTPSink(python: try pythonInterpreter(), arguments: ["--tls", tls.path, "--auth", "hearth:p%w0rd"])
        let url = "smtp+starttls://hearth:p%25w0rd@localhost:\(sink.port)"
        let server = try serve(smtp: url, extra: ["HEARTH_SMTP_CA_FILE": tls.path + "/ca.pem"])
        _ = try post(server.baseURL + "/v1/accounts:signUp", #"{"email":"tls@example.com","password":"secret1"}"#)
        #expect(try post(server.baseURL + "/v1/accounts:sendOobCode", #"{"requestType":"PASSWORD_RESET","email":"tls@example.com"}"#).status == 200)
        #expect(try sink.nextMail().to == ["tls@example.com"])
        server.signal(SIGTERM)
        _ = try server.waitForExit()

        // Without the test authority the certificate is not trusted: nothing is sent, the
        // log says why, and the password never appears in it.
        let untrusted = try serve(smtp: url)
        #expect(try post(untrusted.baseURL + "/v1/accounts:sendOobCode", #"{"requestType":"PASSWORD_RESET","email":"tls@example.com"}"#).status == 200)
        try untrusted.waitForLog("email action mail not sent after 1 attempt(s): permanent: TLS: the certificate of localhost is not trusted", count: 1)
        #expect(!untrusted.log.contains("p%w0rd") && !untrusted.log.contains("p%25w0rd"))
    }

    @Test func withoutSMTPAClearErrorAndTheOperatorsLink() throws {
        let server = try serve(smtp: nil)
        let base = server.baseURL
        _ = try post(base + "/v1/accounts:signUp", #"{"email":"op@example.com","password":"secret1"}"#)
        let refused = try post(base + "/v1/accounts:sendOobCode", #"{"requestType":"PASSWORD_RESET","email":"op@example.com"}"#)
        #expect(refused.status == 501 && Self.error(refused.json)?.hasPrefix("EMAIL_NOT_CONFIGURED") == true, "\(refused)")
        let printed = try run(HearthProcess.binaryPath, ["users", "reset-link", "--email", "OP@example.com", "--link-base", Self.linkBase, "--data-dir", dir.path])
        #expect(printed.status == 0, "\(printed.output)")
        let link = printed.output.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(link.hasPrefix(Self.linkBase + "?mode=resetPassword&oobCode="))
        let marker = try #require(link.range(of: "oobCode="))
        let code = String(link[marker.upperBound...].prefix { $0 != "&" })
        #expect(try post(base + "/v1/accounts:resetPassword", #"{"oobCode":"\#(code)","newPassword":"fresh-secret"}"#).status == 200)
        #expect(try post(base + "/v1/accounts:signInWithPassword", #"{"email":"op@example.com","password":"fresh-secret"}"#).status == 200)
        #expect(try run(HearthProcess.binaryPath, ["users", "reset-link", "--email", "none@example.com", "--data-dir", dir.path]).status != 0)
        #expect(Self.error(try post(base + "/v1/accounts:sendOobCode", #"{"email":"op@example.com"}"#).json) == "MISSING_REQ_TYPE")
    }

    @Test func badMailSettingsStopTheStart() throws {
        let server = try HearthProcess(
            arguments: ["serve", "--port", "0", "--data-dir", dir.path, "--rules", try HearthProcess.writeRules(HearthProcess.openRules, in: dir.path)],
            dataDirectory: dir.path, environment: ["HEARTH_SMTP_URL": "smtp://127.0.0.1:2525"])
        #expect(try server.waitForExit() != 0)
        #expect(server.log.contains("email actions: smtpURL needs mailFrom"), "\(server.log)")
    }
}
