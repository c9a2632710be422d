import HearthStore
#if canImport(Glibc)
import Glibc
#endif

/// What a server above the store needs of the local files the engines keep (`LocalFiles`):
/// the mode of a file holding user data, and creating a data directory (mode 0700) — for
/// the data directory's lock.
public enum DataDirectoryFiles {
    /// Owner read/write only.
    public static var fileMode: mode_t { LocalFiles.fileMode }

    /// Creates `directory` (mode 0700) unless it exists; the error's text says why not.
    public static func makeDirectory(_ directory: String) throws(DataDirectoryFiles.Failure) {
        do {
            try LocalFiles.makeDirectory(directory)
        } catch {
            if case .io(_, _, let code) = error { throw Failure(description: error.description, errno: code) }
            throw Failure(description: error.description, errno: nil)
        }
    }

    public struct Failure: Error, CustomStringConvertible {
        public let description: String
        /// The `errno` of the call that failed, when one did (what a caller tells apart:
        /// a permission or a read-only file system from other failures).
        public let errno: Int32?
    }
}
