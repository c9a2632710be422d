import Foundation
import HearthAccounts
import Testing

/// The administrators' shortest password is stated where administrators are made.
@Suite struct AdminPasswordDocsTests {
    static let root = String(#filePath).components(separatedBy: "/Tests/")[0]

    @Test(arguments: ["README.md", "docs/console.md"])
    func theMinimumIsDocumented(file: String) throws {
        let text = try String(contentsOfFile: Self.root + "/" + file, encoding: .utf8)
        let minimum = ConsoleAccounts.defaultMinimumPasswordLength
        #expect(text.contains("hearth admins add"), "\(file)")
        #expect(text.contains("at least \(minimum) characters"), "\(file)")
    }
}
