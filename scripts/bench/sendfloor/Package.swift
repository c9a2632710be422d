// swift-tools-version:6.1
// The kernel's cost of a push, by the way it is handed over: one send() per socket
// against one io_uring submission for many sockets' sends (liburing, Debian's
// liburing-dev), to a receiver like the fan-out client. Built and run only by
// scripts/bench/sendfloor.sh, never by the main package or CI.
import PackageDescription

let package = Package(
    name: "sendfloor-bench",
    targets: [
        .systemLibrary(name: "CURingBench", pkgConfig: "liburing", providers: [.apt(["liburing-dev"])]),
        .executableTarget(name: "sendfloor", dependencies: ["CURingBench"]),
    ],
    swiftLanguageModes: [.v6]
)
