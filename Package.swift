// swift-tools-version:6.0
import PackageDescription

// No outside Swift packages: C comes from the system (libsqlite3-dev, zlib1g-dev, libpq-dev)
// through system-library targets, everything else is the toolchain's.
let package = Package(
    name: "lctrace",
    products: [
        .executable(name: "lctrace", targets: ["lctrace"]),
        .library(name: "LCTrace", targets: ["LCTrace"]),
    ],
    targets: [
        .systemLibrary(name: "CSQLite", path: "Sources/CSQLite", providers: [.apt(["libsqlite3-dev"])]),
        .systemLibrary(name: "CZlib", path: "Sources/CZlib", providers: [.apt(["zlib1g-dev"])]),
        // ISA-L's inflate, loaded at run time where libisal is installed (zlib otherwise).
        .target(name: "CFastInflate", path: "Sources/CFastInflate"),
        // SHA-256 on the CPU's SHA extensions where it has them (the Swift code otherwise).
        .target(name: "CFastHash", path: "Sources/CFastHash"),
        // PostgreSQL's client library, for a team database (`--db postgresql://…`).
        .systemLibrary(name: "CPostgreSQL", path: "Sources/CPostgreSQL", pkgConfig: "libpq",
                       providers: [.apt(["libpq-dev"]), .brew(["libpq"])]),
        // Release builds skip the run-time exclusivity checks (8 % of ingest CPU in the hot
        // loops); debug builds and so the tests keep them.
        .target(name: "LCTrace", dependencies: ["CSQLite", "CZlib", "CPostgreSQL", "CFastInflate", "CFastHash"],
                swiftSettings: [.unsafeFlags(["-enforce-exclusivity=unchecked"], .when(configuration: .release))]),
        .target(name: "LCTraceCLI", dependencies: ["LCTrace"]),
        .executableTarget(name: "lctrace", dependencies: ["LCTraceCLI"]),
        .target(name: "LCTraceGen", dependencies: ["CZlib", "LCTrace", "LCTraceCLI"]),
        .executableTarget(name: "lctrace-gen", dependencies: ["LCTraceGen"]),
        .executableTarget(name: "lctrace-fuzz", dependencies: ["LCTraceGen", "LCTrace", "LCTraceCLI"]),
        .testTarget(name: "LCTraceTests", dependencies: ["LCTrace", "LCTraceCLI", "LCTraceGen"],
                    exclude: ["Fuzz/regressions", "Report/Golden", "Fixtures"]),
    ],
    swiftLanguageModes: [.v6]
)
