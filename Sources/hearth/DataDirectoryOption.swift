import ArgumentParser
#if canImport(Glibc)
import Glibc
#endif

/// `--data-dir`, shared by every operator command that opens the database. The directory
/// must exist: only `hearth serve` creates one, so a mistyped path is reported instead of
/// quietly starting an empty database (with new signing keys) beside the real one.
struct DataDirectoryOption: ParsableArguments {
    @Option(name: .customLong("data-dir"), help: "Directory holding the database file; must exist (default ./hearth-data, or HEARTH_DATA_DIR).")
    var dataDir: String?

    var path: String { dataDir ?? Environment()["HEARTH_DATA_DIR"] ?? "./hearth-data" }

    func validate() throws {
        var info = stat()
        guard stat(path, &info) == 0 else {
            let code = errno
            if code == ENOENT {
                throw Tool.fail("data directory \(path) does not exist (only 'hearth serve' creates one; check --data-dir or HEARTH_DATA_DIR)")
            }
            throw Tool.fail("cannot use data directory \(path): \(String(cString: strerror(code)))")
        }
        guard (info.st_mode & S_IFMT) == S_IFDIR else { throw Tool.fail("data directory \(path) is not a directory") }
    }
}
