extension HTTPRequest {
    /// The parser's initializer: path and query were already split over bytes, so the
    /// target is not searched again as a `String`.
    init(parsedMethod method: String, target: String, path: String, query: String?, minorVersion: Int) {
        self.method = method
        self.target = target
        self.path = path
        self.query = query
        self.minorVersion = minorVersion
        self.headers = HTTPHeaders()
        self.body = []
        self.remoteAddress = ""
    }
}
