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
            throw Failure(description: error.description)
        }
    }

    public struct Failure: Error, CustomStringConvertible {
        public let description: String
    }
}
