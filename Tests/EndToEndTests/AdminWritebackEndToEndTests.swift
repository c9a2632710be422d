import Foundation
import Testing

/// Writing back from a Cloud Function outside emulator mode: the official
/// firebase-admin with `credentials.Certificate` of a service-account JSON whose `token_uri`
/// is Hearth's `/oauth2/v4/token`, an https `databaseURL` served by nginx (the production
/// site file, with a self-signed certificate made here), Hearth listing the account in
/// `HEARTH_ADMIN_SERVICE_ACCOUNTS` and not accepting the emulator's `owner`.
@Suite struct AdminWritebackEndToEndTests {
    /// Nobody but an admin may write /stats.
    static let rules = #"{"rules": {".read": true, ".write": false}}"#
    let dir = TemporaryDirectory()
    static let checks = [
        "listed account writes as admin", "unlisted account is refused", "own endpoint as aud is accepted",
        "refused: wrong aud", "refused: expired", "refused: over an hour", "refused: iat in the future",
        "refused: tampered", "refused: garbage", "refused: iss of another account", "refused: another grant type",
    ]

    func openssl(_ arguments: [String]) throws {
        let result = try run("/usr/bin/openssl", arguments)
        #expect(result.status == 0, "openssl \(arguments): \(result.output)")
    }

    /// A service-account JSON with the RSA key `<name>.pem`, made by `openssl genpkey` the
    /// first time; with `publicOnly`, `<name>-public.json` holding only the public half in
    /// `private_key` (what Hearth needs).
    func account(_ name: String, tokenURI: String, python: String, publicOnly: Bool = false) throws -> String {
        var key = dir.path + "/\(name).pem"
        if !FileManager.default.fileExists(atPath: key) {
            try openssl(["genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048", "-out", key])
        }
        if publicOnly {
            try openssl(["pkey", "-in", key, "-pubout", "-out", dir.path + "/\(name)-public.pem"])
            key = dir.path + "/\(name)-public.pem"
        }
        let path = dir.path + (publicOnly ? "/\(name)-public.json" : "/\(name).json")
        let made = try runPythonDriver(python, script: "admin_writeback.py",
                                       arguments: ["account", path, "\(name)@demo-hearth.iam.gserviceaccount.com", key, tokenURI], environment: [:])
        #expect(made.status == 0, "\(made.stderr)")
        return path
    }

    @Test func firebaseAdminWithAServiceAccountWritesBackThroughTLS() throws {
        let python = try pythonInterpreter()
        let cert = dir.path + "/cert.pem", certKey = dir.path + "/cert-key.pem"
        try openssl(["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=127.0.0.1",
                     "-addext", "subjectAltName=IP:127.0.0.1", "-keyout", certKey, "-out", cert])
        // Hearth gets the account's JSON with only the public key; the function's copy, with
        // the private key, gets its token_uri once nginx (which needs Hearth's port) runs.
        let data = dir.path + "/data"
        try FileManager.default.createDirectory(atPath: data, withIntermediateDirectories: true)
        let hearthCopy = try account("listed", tokenURI: "https://hearth.invalid/oauth2/v4/token", python: python, publicOnly: true)
        #expect(try !String(contentsOfFile: hearthCopy, encoding: .utf8).contains("PRIVATE"))
        let server = try HearthProcess(
            arguments: ["serve", "--port", "0", "--data-dir", data, "--rules", try HearthProcess.writeRules(Self.rules, in: data),
                        "--admin-service-accounts", hearthCopy],
            dataDirectory: data, environment: ["HEARTH_TRUSTED_PROXIES": "127.0.0.1"])
        try server.waitUntilListening()
        let nginx = try NginxProcess.start(in: dir.path + "/nginx", upstreamPort: server.port,
                                           tls: .init(certificate: cert, key: certKey))
        let base = "https://127.0.0.1:\(nginx.port)"
        let listedPath = try account("listed", tokenURI: base + "/oauth2/v4/token", python: python)
        let unlisted = try account("unlisted", tokenURI: base + "/oauth2/v4/token", python: python)

        // The rules refuse the write to users (here: nobody signed in).
        #expect(try curl("PUT", "http://127.0.0.1:\(server.port)/stats/x.json", body: "5").status == 401)
        let result = try runPythonDriver(python, script: "admin_writeback.py", arguments: ["writeback", base, listedPath, unlisted],
                                         environment: ["FIREBASE_DATABASE_EMULATOR_HOST": nil, "REQUESTS_CA_BUNDLE": cert,
                                                       "GOOGLE_CLOUD_PROJECT": nil, "FIREBASE_CONFIG": nil])
        #expect(result.status == 0, "\(result.stdout)\n\(result.stderr)")
        for name in Self.checks {
            #expect(result.stdout.contains(#""name": "\#(name)", "ok": true"#), "\(name): \(result.stdout)\n\(result.stderr)")
        }
        #expect(try curl("GET", "http://127.0.0.1:\(server.port)/stats.json").body == #"{"x":1}"#)
        #expect(!server.log.contains("PRIVATE KEY"))
        try nginx.stop()
        server.signal(SIGTERM)
        #expect(try server.waitForExit() == 0)
    }

    @Test func aBadAdminServiceAccountFileStopsTheStartWithItsName() throws {
        try expectBadServiceAccountFileStopsTheStart(variable: "HEARTH_ADMIN_SERVICE_ACCOUNTS", setting: "adminServiceAccounts", in: dir.path)
    }
}

/// A service-account file with an unusable key, named in `variable`: the start fails and
/// the log names the setting, the file and the reason.
func expectBadServiceAccountFileStopsTheStart(variable: String, setting: String, in directory: String) throws {
    let bad = directory + "/broken.json"
    try Data(#"{"client_email":"x@y","private_key":"nope"}"#.utf8).write(to: URL(fileURLWithPath: bad))
    let server = try HearthProcess(
        arguments: ["serve", "--port", "0", "--data-dir", directory, "--rules", try HearthProcess.writeRules(HearthProcess.openRules, in: directory)],
        dataDirectory: directory, environment: [variable: bad])
    #expect(try server.waitForExit() != 0)
    #expect(server.log.contains("\(setting): \(bad): private_key: not a PEM private or public key"), "\(server.log)")
}
