import Foundation

/// One curl call's outcome.
struct CurlResult {
    var status: Int
    var body: String
    var headers: [String: String]
}

/// Runs the real curl against the server, the way the README shows it.
///
/// `maxSeconds` bounds the whole exchange (curl fails past it, and so does this).
func curl(_ method: String, _ url: String, body: String? = nil, headers: [String] = [], maxSeconds: Int? = nil) throws -> CurlResult {
    let dir = TemporaryDirectory()
    let headerFile = dir.path + "/headers"
    var args = ["-s", "-S", "-o", dir.path + "/body", "-D", headerFile, "-w", "%{http_code}", "-X", method, url]
    if let maxSeconds { args += ["--max-time", String(maxSeconds)] }
    if method == "HEAD" { args = ["-s", "-S", "-I", "-o", dir.path + "/body", "-D", headerFile, "-w", "%{http_code}", url] }
    for header in headers { args += ["-H", header] }
    if body != nil { args += ["--data-binary", "@-"] }
    let (status, output) = try run("/usr/bin/curl", args, input: body)
    guard status == 0, let code = Int(output) else {
        throw CurlError.failed(status: status, output: output)
    }
    let responseBody = (try? String(contentsOfFile: dir.path + "/body", encoding: .utf8)) ?? ""
    var parsed: [String: String] = [:]
    for line in ((try? String(contentsOfFile: headerFile, encoding: .utf8)) ?? "").split(separator: "\r\n") {
        if let colon = line.firstIndex(of: ":") {
            parsed[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
    }
    return CurlResult(status: code, body: responseBody, headers: parsed)
}

enum CurlError: Error {
    case failed(status: Int32, output: String)
}

/// Parses JSON text with Foundation (an independent oracle for our own writer).
func json(_ text: String) -> NSObject? {
    try? JSONSerialization.jsonObject(with: Data(text.utf8), options: [.fragmentsAllowed]) as? NSObject
}
