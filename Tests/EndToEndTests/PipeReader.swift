import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Reads a child's output pipe to its end on a thread of its own, with blocking reads.
///
/// Not `FileHandle.readabilityHandler`: that arms a libdispatch read source per pipe, and
/// tearing such sources down while others are set up corrupts libdispatch's epoll
/// bookkeeping on Linux (a swift-corelibs-libdispatch bug, its tracker's #949: a
/// use-after-free of a muxnote, reproduced there with Foundation alone). The suite crashed
/// that way in `_dispatch_event_loop_drain` (974ec72, and a CI run today during the
/// PostgreSQL kill test, with three nodes' and many curls' pipes coming and going). A
/// blocking read registers nothing with the event loop, so there is no source to tear down;
/// the thread ends at end of file (the child and everything that inherited the pipe are
/// gone).
enum PipeReader {
    /// The most bytes one read takes.
    static let chunkBytes = 64 * 1024

    /// Calls `onData` with each chunk as it arrives, then `onEnd` once, from the reading
    /// thread. `handle` is kept open until then.
    static func drain(_ handle: FileHandle, onData: @escaping @Sendable (Data) -> Void, onEnd: @escaping @Sendable () -> Void) {
        let thread = Thread {
            let fd = handle.fileDescriptor
            var buffer = [UInt8](repeating: 0, count: chunkBytes)
            while true {
                let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
                if n > 0 {
                    onData(Data(buffer[0..<n]))
                    continue
                }
                if n < 0 && errno == EINTR { continue }
                break
            }
            withExtendedLifetime(handle) {}
            onEnd()
        }
        thread.name = "hearth-test-pipe-reader"
        thread.start()
    }
}
