import Foundation
import Testing

/// Every relative link in the README and the docs points at a file that exists, and every
/// `#anchor` at a heading of that file (GitHub's heading ids), so a renamed heading or a
/// moved file is caught here rather than by a reader.
@Suite struct DocumentationLinksTests {
    static let root = String(#filePath).components(separatedBy: "/Tests/")[0]

    /// The Markdown files checked, relative to the repository root: the README, the
    /// benchmarks and their history, every file in `docs/` and its folders, and the rules
    /// fixtures' README.
    static func documents() throws -> [String] {
        let docs = try FileManager.default.subpathsOfDirectory(atPath: root + "/docs").filter { $0.hasSuffix(".md") }.map { "docs/" + $0 }
        return ["README.md", "BENCHMARKS.md", "scripts/nginx/README.md", "Tests/HearthRulesTests/Fixtures/README.md"] + docs.sorted()
    }

    /// `[text](target)` links outside code blocks and code spans.
    static func links(in markdown: String) -> [String] {
        var result: [String] = []
        var inFence = false
        for line in markdown.components(separatedBy: "\n") {
            if line.trimmingCharacters(in: .whitespaces).hasPrefix("```") {
                inFence.toggle()
                continue
            }
            if inFence { continue }
            let prose = line.replacing(/`[^`]*`/, with: "")
            for match in prose.matches(of: /\]\(([^)\s]+)(?:\s+"[^"]*")?\)/) {
                result.append(String(match.output.1))
            }
        }
        return result
    }

    /// GitHub's id for a heading: lower case, spaces to `-`, everything but letters,
    /// digits, `-` and `_` dropped; repeats get `-1`, `-2`, ….
    static func anchors(in markdown: String) -> Set<String> {
        var seen: [String: Int] = [:]
        var result: Set<String> = []
        var inFence = false
        for line in markdown.components(separatedBy: "\n") {
            if line.hasPrefix("```") { inFence.toggle() }
            guard !inFence, let heading = line.wholeMatch(of: /#{1,6}\s+(.*?)\s*#*\s*/) else { continue }
            var slug = ""
            for character in heading.output.1.lowercased() {
                if character.isLetter || character.isNumber || character == "-" || character == "_" {
                    slug.append(character)
                } else if character == " " {
                    slug.append("-")
                }
            }
            let count = seen[slug, default: 0]
            seen[slug] = count + 1
            result.insert(count == 0 ? slug : "\(slug)-\(count)")
        }
        return result
    }

    /// Broken links in `documents`, as `file: target (why)`.
    static func brokenLinks(in documents: [String]) throws -> [String] {
        var broken: [String] = []
        for document in documents {
            let text = try String(contentsOfFile: root + "/" + document, encoding: .utf8)
            let folder = (document as NSString).deletingLastPathComponent
            for link in links(in: text) where !link.contains("://") && !link.hasPrefix("mailto:") {
                let parts = link.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false).map(String.init)
                let target = parts[0].isEmpty ? document : ((folder as NSString).appendingPathComponent(parts[0]) as NSString).standardizingPath
                var isDirectory: ObjCBool = false
                guard FileManager.default.fileExists(atPath: root + "/" + target, isDirectory: &isDirectory) else {
                    broken.append("\(document): \(link) (no file \(target))")
                    continue
                }
                guard parts.count == 2 else { continue }
                guard !isDirectory.boolValue, target.hasSuffix(".md") else {
                    broken.append("\(document): \(link) (an anchor into a file that is not Markdown)")
                    continue
                }
                let headings = anchors(in: try String(contentsOfFile: root + "/" + target, encoding: .utf8))
                if !headings.contains(parts[1]) { broken.append("\(document): \(link) (no heading #\(parts[1]) in \(target))") }
            }
        }
        return broken
    }

    @Test func everyRelativeLinkAndAnchorResolves() throws {
        let documents = try Self.documents()
        #expect(documents.count > 5)
        #expect(documents.contains("docs/bench/history.md") && documents.contains("docs/protocol/wire.md"))
        #expect(try Self.brokenLinks(in: documents) == [])
    }

    /// The checker itself: GitHub's heading ids, and links in code left alone.
    @Test func theCheckerFindsWhatItShould() {
        let anchors = Self.anchors(in: "# Hearth\n## Run it (fresh Debian/Ubuntu machine with Swift 6)\n### `hearth export [--path P]`\n## Run it (fresh Debian/Ubuntu machine with Swift 6)\n```\n# not a heading\n```\n")
        #expect(anchors == ["hearth", "run-it-fresh-debianubuntu-machine-with-swift-6", "hearth-export---path-p",
                            "run-it-fresh-debianubuntu-machine-with-swift-6-1"])
        let links = Self.links(in: "see [a](docs/a.md#x) and `[b](b.md)`\n```\n[c](c.md)\n```\n[d](d.md \"title\") [e](https://example.com)")
        #expect(links == ["docs/a.md#x", "d.md", "https://example.com"])
    }
}
