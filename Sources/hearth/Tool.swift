import ArgumentParser
import HearthJSON
import HearthSystem
#if canImport(Glibc)
import Glibc
#endif

/// Error reporting shared by the commands: `Error: <message>` on standard error (the form
/// and casing swift-argument-parser uses for its own errors), exit status 1.
enum Tool {
    /// Runs `body`; any error but an `ExitCode` or a `Failure` is reported with `fail`.
    static func run(_ body: () throws -> Void) throws {
        do {
            try body()
        } catch let error as ExitCode {
            throw error
        } catch let error as Failure {
            throw error
        } catch {
            throw fail("\(error)")
        }
    }

    /// A command's failure: swift-argument-parser prints it as `Error: <description>` on
    /// standard error and exits 1, once parsing is over. Nothing is written when it is
    /// thrown, so a failure found while validating (a missing data directory) stays silent
    /// when the command line also asks for `--help`: the parser then prints the help alone.
    struct Failure: Error, CustomStringConvertible {
        /// The message, its first letter capitalised (`sentence`).
        let description: String
    }

    /// The error to throw for `message` (printed with its first letter capitalised).
    static func fail(_ message: String) -> Failure {
        Failure(description: sentence(message))
    }

    /// `text` with its first letter capitalised: library errors describe themselves in
    /// lower case (they are also embedded in longer messages); the CLI prints sentences.
    /// One that starts with a file name or path (a first word with '/' or '.') is left as
    /// it is: `junk.sqlite` is not `Junk.sqlite`.
    static func sentence(_ text: String) -> String {
        let first = text.prefix { $0 != " " }
        if first.contains("/") || first.contains(".") { return text }
        return text.prefix(1).uppercased() + text.dropFirst()
    }

    /// A usage error from a library error's description (shown with the command's usage).
    static func usageError(_ error: any Error) -> ValidationError {
        ValidationError(sentence("\(error)"))
    }

    /// Writes `text` to standard error, unbuffered.
    static func standardError(_ text: String) {
        Array(text.utf8).withUnsafeBytes { _ = Syscall.writeBestEffort(STDERR_FILENO, $0) }
    }

    /// `--path`, as a data path (call it from `validate()`, so a bad one prints the
    /// command's own usage).
    static func path(_ text: String) throws -> DataPath {
        do {
            return try DataPath(string: text)
        } catch {
            throw ValidationError("--path: \(error)")
        }
    }
}
