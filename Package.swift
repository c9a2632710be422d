// swift-tools-version:6.0
// Hearth: a self-hosted Firebase Realtime Database replacement. Module map: docs/architecture.md.
import PackageDescription

let package = Package(
    name: "Hearth",
    platforms: [.macOS(.v14)],
    products: [
        .executable(name: "hearth", targets: ["hearth"]),
        .library(name: "HearthServer", targets: ["HearthServer"]),
    ],
    // Exact versions: the repository keeps no Package.resolved, so a range would
    // let every build pick whatever is newest. swift-atomics is swift-prometheus's own
    // dependency, named here only to pin it (see HearthTesting). Move a version on purpose, in its own commit.
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", exact: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log", exact: "1.16.2"),
        .package(url: "https://github.com/apple/swift-metrics", exact: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus", exact: "2.4.1"),
        .package(url: "https://github.com/apple/swift-atomics", exact: "1.3.0"),
    ],
    targets: [
        // C seams: the only places C is reached from.
        .systemLibrary(name: "CSQLite", pkgConfig: "sqlite3", providers: [.apt(["libsqlite3-dev"])]),
        .systemLibrary(name: "COpenSSL", pkgConfig: "libcrypto", providers: [.apt(["libssl-dev"])]),
        .target(name: "CSystem"),
        // libpq, PostgreSQL's C client: the PostgreSQL engine's only way to the server.
        .systemLibrary(name: "CLibPQ", pkgConfig: "libpq", providers: [.apt(["libpq-dev"])]),

        // Libraries, lowest first. Arrows point down only (docs/architecture.md).
        .target(name: "HearthJSON"),
        .target(name: "HearthRules", dependencies: ["HearthJSON"]),
        // The storage seam: what every engine implements and the write logic they share.
        // Knows no engine.
        .target(name: "HearthStore", dependencies: ["HearthJSON", "HearthSystem"]),
        // The SQLite engine (one file in a data directory). Only this module knows SQLite.
        .target(name: "HearthSQLite", dependencies: ["HearthStore", "HearthJSON", "HearthSystem", "CSQLite"]),
        // The PostgreSQL engine: the same store protocols as the SQLite engine,
        // for several Hearth nodes on one database. Only this module knows PostgreSQL.
        .target(name: "HearthPostgres", dependencies: ["HearthStore", "HearthJSON", "HearthSystem", "CLibPQ"]),
        // The one system-call wrapper (EINTR retried, typed errors), for every module that
        // talks to the kernel: HTTP's sockets, the mail sender's.
        .target(name: "HearthSystem", dependencies: ["CSystem"]),
        .target(name: "HearthHTTP", dependencies: ["HearthSystem", "CSystem", "COpenSSL"]),
        // Mail for the email actions: an SMTP client (plain or STARTTLS by libssl)
        // and a bounded queue that retries, off the request path.
        .target(name: "HearthMail", dependencies: ["HearthHTTPClient", "HearthAuth", "HearthSystem"]),
        // A small blocking HTTP/1.1 client (trigger deliveries; JWKS fetches):
        // outgoing connections with timeouts, TLS by libssl (shared with the mail sender).
        .target(name: "HearthHTTPClient", dependencies: ["HearthSystem", "COpenSSL"]),
        .target(name: "HearthAuth", dependencies: ["HearthJSON", "COpenSSL"]),
        .target(name: "HearthStreams", dependencies: ["HearthJSON"]),
        // The Firebase wire protocol's codec (docs/protocol/wire.md): envelopes,
        // chunking, the SDK hash, query objects. Pure; the adapter over the core uses it.
        .target(name: "HearthWire", dependencies: ["HearthJSON", "COpenSSL"]),
        // The transport-neutral database core: reads and writes for a caller
        // behind the rules, compare-and-set, the read cache. REST + SSE and the wire
        // protocol are adapters over it.
        .target(
            name: "HearthDatabase",
            dependencies: ["HearthJSON", "HearthRules", "HearthStore", "HearthStreams", "HearthAuth",
                           .product(name: "Logging", package: "swift-log")]),
        // Database triggers: the declared triggers, the events a write causes
        // (recorded in its transaction through the engine's outbox), RTDB CloudEvents, and
        // one deliverer per trigger over the HTTP client. Knows no HTTP server.
        .target(
            name: "HearthTriggers",
            dependencies: ["HearthJSON", "HearthStore", "HearthDatabase", "HearthHTTPClient", "HearthSystem", "COpenSSL",
                           .product(name: "Logging", package: "swift-log")]),
        // The account core: accounts, sign-in limits, signing keys, over the
        // seam's records, for any transport. Knows no HTTP; the account endpoints in
        // HearthServer map its errors to statuses.
        .target(name: "HearthAccounts", dependencies: ["HearthStore", "HearthAuth", "HearthJSON", "HearthHTTPClient", "HearthSystem"]),
        // The operator's tools over any engine: backup and restore of a data
        // directory, copying a store between engines, Firebase users files, their files.
        // Used by the CLI; over the seam, knows no engine and no HTTP.
        .target(name: "HearthMaintenance", dependencies: ["HearthStore", "HearthAccounts", "HearthJSON", "HearthAuth", "HearthSystem"]),
        .target(
            name: "HearthServer",
            dependencies: [
                "HearthJSON", "HearthRules", "HearthStore", "HearthSQLite", "HearthPostgres", "HearthHTTP", "HearthAuth", "HearthStreams", "HearthDatabase", "HearthWire", "HearthAccounts",
                "HearthMail", "HearthTriggers", "CSystem",  // malloc_trim (MemoryTrimmer)
                "HearthSystem",  // the data directory's lock (RecordLock)
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
            ]
        ),
        .executableTarget(
            name: "hearth",
            dependencies: [
                // Every module Sources/hearth imports, named.
                "HearthServer", "HearthAccounts", "HearthMaintenance", "HearthRules", "HearthAuth", "HearthJSON", "HearthStore", "HearthTriggers",
                "HearthHTTPClient", "HearthSystem",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),

        // The benchmarks' load generator: wire / SSE subscribers, a REST writer
        // and idle connections from epoll threads, so the client is not the limit.
        // scripts/bench/wire.sh and streams.sh run it; syscalls only through HearthSystem.
        .executableTarget(name: "hearth-load", dependencies: ["HearthSystem"]),

        // libFuzzer targets (see README, "Fuzzing").
        .executableTarget(name: "FuzzHTTPParser", dependencies: ["HearthHTTP"]),
        .executableTarget(name: "FuzzWebSocketParser", dependencies: ["HearthHTTP", "HearthWire"]),
        .executableTarget(name: "FuzzJSONParser", dependencies: ["HearthJSON"]),
        .executableTarget(name: "FuzzRules", dependencies: ["HearthRules"]),
        // Hand-run timing of rule checks (BENCHMARKS.md): swift run -c release RulesBench
        .executableTarget(name: "RulesBench", dependencies: ["HearthRules", "HearthJSON"]),

        // Shared test helpers (temp directories, child processes by posix_spawn); tests only.
        // Atomics: not imported; listed so the exact pin of swift-atomics above (swift-prometheus's
        // dependency) belongs to a target, which SwiftPM asks of every root dependency.
        .target(name: "HearthTesting", dependencies: ["COpenSSL", .product(name: "Atomics", package: "swift-atomics"), .product(name: "Logging", package: "swift-log")],
                path: "Tests/HearthTesting"),
        .testTarget(name: "HearthJSONTests", dependencies: ["HearthJSON", "HearthTesting"]),
        .testTarget(name: "HearthRulesTests", dependencies: ["HearthRules", "HearthJSON", "HearthTesting"], resources: [.copy("Fixtures")]),
        .testTarget(name: "HearthStoreTests", dependencies: ["HearthStore", "HearthSQLite", "HearthJSON", "HearthSystem", "HearthTesting"]),
        .testTarget(name: "HearthPostgresTests", dependencies: ["HearthPostgres", "HearthStore", "HearthJSON", "HearthTesting"]),
        // The storage contract (docs/architecture.md), the same cases on every engine.
        .testTarget(name: "StorageContractTests", dependencies: ["HearthStore", "HearthSQLite", "HearthPostgres", "HearthJSON", "HearthTesting"]),
        .testTarget(name: "HearthHTTPTests", dependencies: ["HearthHTTP", "HearthSystem", "HearthTesting"]),
        .testTarget(name: "HearthLoadTests", dependencies: ["hearth-load"]),
        .testTarget(name: "HearthMailTests", dependencies: ["HearthMail"]),
        .testTarget(name: "HearthHTTPClientTests", dependencies: ["HearthHTTPClient", "HearthSystem", "HearthTesting"]),
        .testTarget(
            name: "HearthTriggersTests",
            dependencies: ["HearthTriggers", "HearthDatabase", "HearthHTTPClient", "HearthStore", "HearthSQLite", "HearthJSON", "HearthSystem", "HearthTesting",
                           .product(name: "Logging", package: "swift-log")]),
        .testTarget(name: "HearthAuthTests", dependencies: ["HearthAuth", "HearthJSON", "HearthTesting"]),
        .testTarget(name: "HearthStreamsTests", dependencies: ["HearthStreams", "HearthJSON"]),
        .testTarget(name: "HearthWireTests", dependencies: ["HearthWire", "HearthJSON", "HearthTesting"]),
        .testTarget(name: "HearthDatabaseTests", dependencies: ["HearthDatabase", "HearthStore", "HearthSQLite", "HearthRules", "HearthJSON", "HearthStreams", "HearthTesting",
                                                         .product(name: "Logging", package: "swift-log")]),
        .testTarget(
            name: "HearthServerTests",
            dependencies: ["HearthServer", "HearthMaintenance", "HearthAccounts", "HearthHTTP", "HearthJSON", "HearthRules", "HearthStore", "HearthSQLite", "HearthAuth", "HearthStreams", "HearthMail", "HearthTriggers", "HearthSystem", "HearthTesting"]),
        // Python/: drivers for the official firebase-admin SDK, run with $HEARTH_PYTHON.
        .testTarget(name: "EndToEndTests", dependencies: ["HearthJSON", "HearthHTTPClient", "HearthTesting"], exclude: ["Python"]),
    ],
    swiftLanguageModes: [.v6]
)
