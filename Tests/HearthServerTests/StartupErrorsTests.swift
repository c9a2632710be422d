import Foundation
import HearthSystem
import HearthTesting
import Logging
import Testing
@testable import HearthServer
#if canImport(Glibc)
import Glibc
#endif

/// Start-up errors that name their fix, as typed errors.
@Suite struct StartupErrorsTests {
    @Test func descriptionsNameTheFix() {
        #expect(StartupError.portInUse(host: "127.0.0.1", port: 9000).description
                == "cannot listen on 127.0.0.1:9000: port 9000 is already in use by another process. Stop that process, or choose "
                + "another port with --port (HEARTH_PORT); --port 0 picks a free one, shown in the 'listening on' line")
        let missing = StartupError.rules(.missing(path: "/etc/hearth/rules.json")).description
        #expect(missing.hasPrefix("cannot read rules file /etc/hearth/rules.json: No such file or directory. "
                                  + "Point --rules (HEARTH_RULES) at your rules file, or create /etc/hearth/rules.json; "))
        #expect(missing.contains(#"{"rules": {".read": false, ".write": false}}"#))
        #expect(missing.contains("'hearth rules check /etc/hearth/rules.json'"))
        // Other unreadable files say what failed, as before (no advice to create what exists).
        #expect(StartupError.rules(.unreadable(path: "r.json", reason: "Permission denied")).description
                == "cannot read rules file r.json: Permission denied")

        let hearth = ProcessUser(uid: 999, name: "hearth")
        #expect(DataDirectoryLockError.notWritable(directory: "/var/lib/hearth", creating: false, errno: EACCES, user: hearth).description
                == "data directory /var/lib/hearth is not writable by user hearth (uid 999), the user Hearth runs as (Permission denied). "
                + "Give it to that user, as root: chown -R hearth /var/lib/hearth && chmod 0700 /var/lib/hearth; "
                + "or run Hearth as the user who owns it; or choose another directory with --data-dir (HEARTH_DATA_DIR)")
        #expect(DataDirectoryLockError.notWritable(directory: "/srv/h/data", creating: true, errno: EACCES,
                                                   user: ProcessUser(uid: 1234, name: nil)).description
                == "cannot create data directory /srv/h/data: its parent /srv/h is not writable by uid 1234, the user Hearth runs as "
                + "(Permission denied). Create the directory for that user, as root: install -d -m 0700 -o 1234 /srv/h/data; "
                + "or choose another directory with --data-dir (HEARTH_DATA_DIR)")
        #expect(DataDirectoryLockError.notWritable(directory: "d", creating: false, errno: EROFS, user: hearth).description
                == "data directory d is on a read-only file system (Read-only file system): choose another directory with "
                + "--data-dir (HEARTH_DATA_DIR) on a writable one (under the shipped systemd unit only /var/lib/hearth is writable)")
    }

    /// Only permissions and a read-only file system get the advice; other failures keep
    /// their own error.
    @Test func onlyPermissionErrnosAreNotWritable() {
        for code in [EACCES, EPERM, EROFS] {
            guard case .notWritable(_, _, let errno, let user)? = DataDirectoryLockError.notWritable("d", creating: false, errno: code) else {
                Issue.record("errno \(code)")
                continue
            }
            #expect(errno == code && user.uid == geteuid())
        }
        for code in [ENOENT, ENOSPC, EIO, nil] as [Int32?] {
            #expect(DataDirectoryLockError.notWritable("d", creating: true, errno: code) == nil)
        }
    }

    @Test func theProcessUserIsTheEffectiveOne() {
        let user = ProcessUser.current()
        #expect(user.uid == geteuid())
        let entry = getpwuid(geteuid())
        #expect(user.name == entry.map { String(cString: $0.pointee.pw_name) })
        #expect(ProcessUser(uid: 7, name: nil).description == "uid 7" && ProcessUser(uid: 7, name: nil).owner == "7")
    }

    /// The server refuses with the typed errors: a missing rules file, a port another
    /// server holds.
    @Test func theServiceThrowsTheTypedErrors() async throws {
        let directory = TemporaryDirectory(prefix: "hearth-live")
        var configuration = HearthConfiguration()
        configuration.port = 0
        configuration.dataDirectory = directory.path + "/data"
        configuration.rulesPath = directory.path + "/missing.json"
        let logger = Logger(label: "test", factory: { _ in SwiftLogNoOpLogHandler() })
        #expect {
            try HearthService(configuration: configuration, logger: logger)
        } throws: { error in
            guard case StartupError.rules(.missing(let path)) = error else { return false }
            return path == configuration.rulesPath
        }

        let first = try LiveServer()
        defer { Task { await first.stop() } }
        configuration.rulesPath = first.rulesPath
        configuration.port = first.port
        #expect {
            try HearthService(configuration: configuration, logger: logger)
        } throws: { error in
            guard case StartupError.portInUse(let host, let port) = error else { return false }
            return host == "127.0.0.1" && port == first.port
        }
        #expect(!FileManager.default.fileExists(atPath: configuration.dataDirectory))
    }
}
