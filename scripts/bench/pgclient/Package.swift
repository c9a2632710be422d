// swift-tools-version:6.1
// The PostgreSQL client choice, measured: libpq (what HearthPostgres uses,
// through a system-library target) against postgres-nio, the maintained Swift client, on
// the round trips Hearth's writer makes. Built and run only by scripts/bench/pgclient.sh,
// never by the main package or CI.
import PackageDescription

let package = Package(
    name: "pgclient-bench",
    platforms: [.macOS(.v13)],
    dependencies: [
        .package(url: "https://github.com/vapor/postgres-nio.git", exact: "1.33.2"),
    ],
    targets: [
        .systemLibrary(name: "CLibPQBench", pkgConfig: "libpq", providers: [.apt(["libpq-dev"])]),
        .executableTarget(name: "pgclient-bench", dependencies: [
            "CLibPQBench", .product(name: "PostgresNIO", package: "postgres-nio"),
        ]),
    ],
    swiftLanguageModes: [.v6]
)
