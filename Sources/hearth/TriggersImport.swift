import ArgumentParser
import Foundation
import HearthTriggers

extension Triggers {
    /// `hearth triggers import`: the triggers file from the manifest `firebase-functions`
    /// produces for deploy, so each function is declared once, in its decorator.
    struct Import: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "import",
            abstract: "Make the triggers file from a functions folder's manifest (functions.yaml).",
            discussion: """
                MANIFEST is what firebase-functions gives the Firebase CLI at deploy: in the functions folder run \
                'ADMIN_PORT=8090 python -m firebase_functions.private.serving', fetch \
                http://127.0.0.1:8090/__/functions.yaml, then stop it with /__/quitquitquit. The same manifest as JSON \
                is read too; '-' reads standard input (at most \(ManifestYAML.maxBytes) bytes). \
                Each Realtime Database function (db_fn.on_value_written, _created, _updated, _deleted) becomes a database \
                trigger with its event, ref, instance, retry and timeoutSeconds; each scheduled function \
                (scheduler_fn.on_schedule) a schedule trigger with its schedule, timeZone and retry (retryCount above 0). \
                Every one of them needs --url NAME=URL, where that function listens. Other kinds (HTTPS, callable, \
                Firestore, Storage, Pub/Sub, blocking auth, task queue, alerts) are listed on standard error with the \
                reason and skipped. The triggers file is printed on standard output, or written to --out. \
                Fails, writing nothing, on a manifest outside the YAML firebase-functions writes, a function without \
                --url, a --url for a function not imported, or no trigger at all.
                """)
        @Argument(help: "The manifest file (YAML or JSON), or - for standard input.") var manifest: String
        @Option(name: .customLong("url"), help: ArgumentHelp("A function's URL: NAME=URL (repeat for each function).", valueName: "NAME=URL"))
        var urls: [String] = []
        @Option(help: ArgumentHelp("Write the triggers file here instead of standard output.", valueName: "FILE")) var out: String?

        func run() throws {
            let bytes = try readManifest()
            let imported: FunctionsManifest.Imported
            do {
                let value = try ManifestYAML.parse(bytes)
                imported = try FunctionsManifest.importTriggers(manifest: value, urls: try FunctionsManifest.urls(urls))
            } catch let error as ManifestYAML.ParseError {
                throw Tool.fail("\(manifest): \(error.description)")
            } catch {
                throw Tool.fail("\(error)")
            }
            for skipped in imported.skipped {
                Tool.standardError("skipped \(skipped.name): \(skipped.reason)\n")
            }
            guard let out else {
                print(imported.fileText, terminator: "")
                return
            }
            do {
                try Data(imported.fileText.utf8).write(to: URL(fileURLWithPath: out), options: .atomic)
            } catch {
                throw Tool.fail("\(out): cannot be written (\(error.localizedDescription))")
            }
        }

        /// The manifest's bytes, refusing more than `ManifestYAML.maxBytes` without reading them all.
        func readManifest() throws -> [UInt8] {
            let handle: FileHandle
            if manifest == "-" {
                handle = FileHandle.standardInput
            } else {
                guard let opened = FileHandle(forReadingAtPath: manifest) else { throw Tool.fail("\(manifest): cannot be read") }
                handle = opened
            }
            defer { if manifest != "-" { try? handle.close() } }
            let data: Data
            do {
                data = try handle.read(upToCount: ManifestYAML.maxBytes + 1) ?? Data()
            } catch {
                throw Tool.fail("\(manifest): cannot be read")
            }
            guard data.count <= ManifestYAML.maxBytes else {
                throw Tool.fail("\(manifest): larger than \(ManifestYAML.maxBytes) bytes")
            }
            return Array(data)
        }
    }
}
