import ArgumentParser
#if canImport(Glibc)
import Glibc
#endif

/// A new password for `users add` and `users set-password`, kept out of `ps` and shell
/// history: on a terminal it is prompted for twice with echo off; otherwise it is the first
/// line of standard input (for scripts: `printf '%s\n' "$PW" | hearth users add …`).
enum PasswordInput {
    static func read() throws -> String {
        guard isatty(STDIN_FILENO) == 1 else { return line() }
        let first = try prompt("Password: ")
        let second = try prompt("Repeat password: ")
        guard first == second else { throw Tool.fail("the passwords do not match; nothing was changed") }
        return first
    }

    /// Prints `text` on standard error and reads one line with the terminal's echo off
    /// (restored afterwards, also when the line is empty or input ends).
    private static func prompt(_ text: String) throws -> String {
        var saved = termios()
        guard tcgetattr(STDIN_FILENO, &saved) == 0 else { throw Tool.fail("cannot read the terminal's settings: \(String(cString: strerror(errno)))") }
        var silent = saved
        silent.c_lflag &= ~tcflag_t(ECHO)
        guard tcsetattr(STDIN_FILENO, TCSAFLUSH, &silent) == 0 else { throw Tool.fail("cannot turn off the terminal's echo: \(String(cString: strerror(errno)))") }
        defer {
            _ = tcsetattr(STDIN_FILENO, TCSAFLUSH, &saved)
            Tool.standardError("\n")
        }
        Tool.standardError(text)
        return line()
    }

    /// One line from standard input, without its line end.
    private static func line() -> String {
        var line = readLine(strippingNewline: true) ?? ""
        if line.hasSuffix("\r") { line.removeLast() }
        return line
    }
}
