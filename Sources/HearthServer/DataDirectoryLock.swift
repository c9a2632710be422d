import Foundation
import HearthSystem

/// Why a data directory could not be locked. Descriptions are for the operator's terminal.
public enum DataDirectoryLockError: Error, CustomStringConvertible, Equatable {
    /// Another process holds a conflicting lock: its pid (0 when it let go in between), its
    /// command line when /proc tells it, whether it serves the directory; and what this
    /// process wanted the lock for.
    case inUse(directory: String, pid: Int32, command: String?, holderServes: Bool, wanted: DataDirectoryLock.Use)
    case system(directory: String, SystemError)
    case create(directory: String, reason: String)
    /// The directory, or its parent when it was to be created, refuses this process: no
    /// permission (`EACCES`, `EPERM`) or a read-only file system (`EROFS`). `user`: whom
    /// the process runs as, whose the directory must be.
    case notWritable(directory: String, creating: Bool, errno: Int32, user: ProcessUser)

    public var description: String {
        switch self {
        case .inUse(let directory, let pid, let command, let holderServes, let wanted):
            let who = pid > 0 ? "pid \(pid)" + (command.map { ": \($0)" } ?? "") : "a process that has just ended"
            switch (holderServes, wanted) {
            case (true, .server):
                return "data directory \(directory) is already served by another Hearth process (\(who)): one data directory has one server; stop that one first, or give this one another --data-dir"
            case (true, _):
                return "data directory \(directory) is served by a running Hearth server (\(who)); stop it first"
            default:
                return "data directory \(directory) is in use by another Hearth process (\(who)); wait for it to finish or stop it first"
            }
        case .system(let directory, let error):
            return "cannot lock data directory \(directory): \(error)"
        case .create(let directory, let reason):
            return "cannot create data directory \(directory): \(reason)"
        case .notWritable(let directory, let creating, let code, let user):
            let why = String(cString: strerror(code))
            let another = "choose another directory with --data-dir (HEARTH_DATA_DIR)"
            if code == EROFS {
                return "data directory \(directory) is on a read-only file system (\(why)): \(another) on a writable one "
                    + "(under the shipped systemd unit only /var/lib/hearth is writable)"
            }
            if creating {
                let parent = (directory as NSString).deletingLastPathComponent
                return "cannot create data directory \(directory): its parent \(parent.isEmpty ? "." : parent) is not writable by \(user), "
                    + "the user Hearth runs as (\(why)). Create the directory for that user, as root: "
                    + "install -d -m 0700 -o \(user.owner) \(directory); or \(another)"
            }
            return "data directory \(directory) is not writable by \(user), the user Hearth runs as (\(why)). "
                + "Give it to that user, as root: chown -R \(user.owner) \(directory) && chmod 0700 \(directory); "
                + "or run Hearth as the user who owns it; or \(another)"
        }
    }

    /// The refusal naming the fix for an `errno` of permissions or a read-only file
    /// system; nil for any other.
    static func notWritable(_ directory: String, creating: Bool, errno code: Int32?) -> DataDirectoryLockError? {
        guard let code, [EACCES, EPERM, EROFS].contains(code) else { return nil }
        return .notWritable(directory: directory, creating: creating, errno: code, user: ProcessUser.current())
    }
}

/// The data directory's lock: a data directory (an engine whose
/// `EngineFactory.dataDirectory` names one) has one server, and what
/// replaces its data runs alone.
///
/// Two record locks on `hearth.lock` in the directory (`RecordLock`; the kernel drops them
/// when their process dies, SIGKILL included, so none is ever stale):
///
/// | use | server byte | data byte |
/// |---|---|---|
/// | `server` (`hearth serve`) | exclusive | shared |
/// | `replacesData` (`import`, `restore`) | - | exclusive |
/// | `writesAccounts` (`users`, `admins`, `keys rotate`) | - | shared |
///
/// So a second server is refused, an import or a restore is refused beside a server or any
/// other writer (and they refuse it), while account, administrator and key changes run
/// beside a server: it reads them from the database and key files (a user's status within
/// `AuthSettings.userStatusCacheSeconds`, console sessions on every request, keys when a
/// token names one it has not loaded), which is how operators revoke a user without a
/// restart. Reading commands (`export`, `backup`, `token`, `users list`) take no lock.
public final class DataDirectoryLock: Sendable {
    public static let fileName = "hearth.lock"
    static let serverByte = 0
    static let dataByte = 1

    public enum Use: Sendable {
        case server, replacesData, writesAccounts
    }

    private let file: RecordLock

    private init(file: RecordLock) {
        self.file = file
    }

    /// Takes the lock for `use` on `directory`, creating the directory (mode 0700, its
    /// parent must exist) when `create`.
    public static func take(_ use: Use, directory: String, create: Bool = false) throws(DataDirectoryLockError) -> DataDirectoryLock {
        if create {
            do {
                try DataDirectoryFiles.makeDirectory(directory)
            } catch {
                throw DataDirectoryLockError.notWritable(directory, creating: true, errno: error.errno) ?? .create(directory: directory, reason: error.description)
            }
        }
        let file: RecordLock
        do {
            file = try RecordLock(path: directory + "/" + fileName, mode: DataDirectoryFiles.fileMode)
        } catch {
            throw DataDirectoryLockError.notWritable(directory, creating: false, errno: error.errno) ?? .system(directory: directory, error)
        }
        let steps: [(byte: Int, exclusive: Bool)] = switch use {
        case .server: [(serverByte, true), (dataByte, false)]
        case .replacesData: [(dataByte, true)]
        case .writesAccounts: [(dataByte, false)]
        }
        for step in steps {
            let holder: Int32?
            do {
                holder = try file.tryLock(byte: step.byte, exclusive: step.exclusive)
            } catch {
                file.release()
                throw .system(directory: directory, error)
            }
            if let holder {
                file.release()
                throw .inUse(directory: directory, pid: holder, command: commandLine(of: holder),
                             holderServes: step.byte == serverByte || serves(holder), wanted: use)
            }
        }
        return DataDirectoryLock(file: file)
    }

    /// Drops the locks (also done when the process ends).
    public func release() {
        file.release()
    }

    /// What `pid` runs, from /proc: the program by its file name and its first argument
    /// (`hearth serve`, `hearth import`), never the rest: flags may carry secrets (a
    /// store URL's password, an SMTP URL). nil when it cannot be read.
    static func commandLine(of pid: Int32) -> String? {
        guard pid > 0, let handle = FileHandle(forReadingAtPath: "/proc/\(pid)/cmdline") else { return nil }
        defer { try? handle.close() }
        guard let data = try? handle.readToEnd(), !data.isEmpty else { return nil }
        var words = data.split(separator: 0, omittingEmptySubsequences: false).map { String(decoding: $0, as: UTF8.self) }
        if words.last == "" { words.removeLast() }
        guard let program = words.first else { return nil }
        words[0] = program.split(separator: "/").last.map(String.init) ?? program
        let line = words.prefix(2).joined(separator: " ")
        return line.count > maxCommandLineCharacters ? String(line.prefix(maxCommandLineCharacters)) + "…" : line
    }

    /// The most characters of another process's program and first argument an error repeats.
    static let maxCommandLineCharacters = 200

    /// Whether `pid` runs `hearth serve` (what the refusal says of it).
    static func serves(_ pid: Int32) -> Bool {
        commandLine(of: pid)?.split(separator: " ").dropFirst().first == "serve"
    }
}
