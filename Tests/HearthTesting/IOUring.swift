import Foundation

/// Whether this kernel lets the tests' process make an io_uring ring:
/// `kernel.io_uring_disabled` absent or 0 (1 and 2 refuse it to this process; a seccomp
/// filter would too, and is not expected where the tests run).
public func ioUringAllowed() -> Bool {
    guard let text = try? String(contentsOfFile: "/proc/sys/kernel/io_uring_disabled", encoding: .utf8) else { return true }
    return text.first == "0"
}
