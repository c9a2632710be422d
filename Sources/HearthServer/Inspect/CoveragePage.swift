import HearthRules

/// The rules coverage report as an HTML page: the rules file with every expression
/// coloured by how much of it was exercised (never, only some results, all) and its counts
/// in a `title` (shown on hover). No script at all; the stylesheet is a separate file
/// (`/.inspect/coverage.css`) under the console's Content-Security-Policy, or inline in a
/// file written by `hearth rules test --coverage`.
public enum CoveragePage {
    public static let stylesheetPath = "/.inspect/coverage.css"

    /// Where the page's styles come from.
    public enum Styles: Sendable {
        /// A `<link>` to this URL (served pages: no inline style under the CSP).
        case linked(String)
        /// Inside the page (a file opened from disk).
        case inline
    }

    public static let css = """
    body { font: 14px/1.45 system-ui, sans-serif; margin: 1.5em; color: #1d1d1f; }
    h1 { font-size: 1.3em; margin: 0 0 .3em; }
    .summary { margin: 0 0 1em; }
    .legend span { padding: 0 .4em; margin-right: .6em; border-radius: 3px; }
    pre.rules { font: 13px/1.5 ui-monospace, SFMono-Regular, Menlo, monospace; background: #fafafa; border: 1px solid #ddd;
                padding: 1em; overflow-x: auto; }
    .cov { border-radius: 2px; }
    .cov-none { background: #ffd6d6; }
    .cov-partial { background: #fff0b3; }
    .cov-full { background: #d4f5d4; }
    .cov:hover:not(:has(.cov:hover)) { outline: 1px solid #555; }
    table.sites { border-collapse: collapse; margin-top: 1em; }
    table.sites td, table.sites th { border: 1px solid #ddd; padding: .2em .5em; text-align: left; }
    """

    public static func html(_ report: CoverageReport, title: String, styles: Styles) -> String {
        var page = "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>" + escape(title) + "</title>"
        switch styles {
        case .linked(let url): page += "<link rel=\"stylesheet\" href=\"" + escape(url) + "\">"
        case .inline: page += "<style>\n" + css + "\n</style>"
        }
        page += "</head><body><h1>" + escape(title) + "</h1>"
        let percent = (report.percent * 10).rounded() / 10
        page += "<p class=\"summary\" id=\"summary\">\(report.evaluatedCount) of \(report.entries.count) expressions evaluated (\(percent) %)</p>"
        page += "<p class=\"legend\"><span class=\"cov-none\">never evaluated</span><span class=\"cov-partial\">only some results</span>"
        page += "<span class=\"cov-full\">all results</span> Hover an expression for its counts.</p>"
        if let text = report.sourceText {
            page += "<pre class=\"rules\">" + annotated(text, report) + "</pre>"
        } else {
            page += table(report)
        }
        return page + "</body></html>\n"
    }

    /// What a hover shows: where the expression is, and its counts by result.
    static func hoverText(_ entry: CoverageReport.Entry) -> String {
        let counts = CoverageResult.allCases.compactMap { result -> String? in
            let count = entry.counts[result.rawValue]
            return count > 0 ? "\(result.name) \(count)" : nil
        }
        let summary = counts.isEmpty ? "never evaluated" : "evaluated \(entry.evaluations) time\(entry.evaluations == 1 ? "" : "s"): " + counts.joined(separator: ", ")
        return "\(entry.site.rule) — \(summary)"
    }

    /// The file's text with a `<span>` around every site; sites nest as expressions do.
    private static func annotated(_ text: String, _ report: CoverageReport) -> String {
        let bytes = Array(text.utf8)
        let order = report.entries.indices.filter {
            let site = report.entries[$0].site
            return site.start < site.end && site.end <= bytes.count
        }.sorted {
            let (a, b) = (report.entries[$0].site, report.entries[$1].site)
            return a.start != b.start ? a.start < b.start : (a.end != b.end ? a.end > b.end : $0 < $1)
        }
        var output = ""
        var open: [Int] = []
        var position = 0
        func emit(upTo end: Int) {
            guard end > position else { return }
            output += escape(String(decoding: bytes[position..<end], as: UTF8.self))
            position = end
        }
        func close(through end: Int) {
            while let top = open.last, top <= end {
                emit(upTo: top)
                output += "</span>"
                open.removeLast()
            }
        }
        for index in order {
            let entry = report.entries[index]
            close(through: entry.site.start)
            // A site that would cross an open one (never, for expressions) is not drawn.
            if let top = open.last, entry.site.end > top { continue }
            emit(upTo: entry.site.start)
            output += "<span class=\"cov cov-\(entry.level.rawValue)\" data-site=\"\(index)\" title=\"" + escape(hoverText(entry)) + "\">"
            open.append(entry.site.end)
        }
        close(through: bytes.count)
        emit(upTo: bytes.count)
        return output
    }

    /// Rules compiled from parsed JSON have no file to annotate: one row a site.
    private static func table(_ report: CoverageReport) -> String {
        var rows = "<table class=\"sites\"><tr><th>rule</th><th>expression</th><th>counts</th></tr>"
        for (index, entry) in report.entries.enumerated() {
            rows += "<tr><td>" + escape(entry.site.rule) + "</td><td><span class=\"cov cov-\(entry.level.rawValue)\" data-site=\"\(index)\" title=\""
                + escape(hoverText(entry)) + "\">" + escape(entry.site.text) + "</span></td><td>" + escape(hoverText(entry)) + "</td></tr>"
        }
        return rows + "</table>"
    }

    static func escape(_ text: String) -> String {
        var escaped = ""
        escaped.reserveCapacity(text.utf8.count)
        for character in text {
            switch character {
            case "&": escaped += "&amp;"
            case "<": escaped += "&lt;"
            case ">": escaped += "&gt;"
            case "\"": escaped += "&quot;"
            case "'": escaped += "&#39;"
            default: escaped.append(character)
            }
        }
        return escaped
    }
}
