import Foundation

/// A fresh, private directory per test (mkdtemp), removed with everything in it when the
/// value is released. Tests never share a data directory.
public final class TemporaryDirectory: Sendable {
    public let path: String

    public init(prefix: String = "hearth-test") {
        var template = Array((NSTemporaryDirectory() + prefix + "-XXXXXX").utf8CString)
        let made = template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) }
        precondition(made != nil, "mkdtemp failed: errno \(errno)")
        path = String(cString: template.withUnsafeBufferPointer { $0.baseAddress! })
    }

    deinit { try? FileManager.default.removeItem(atPath: path) }
}
