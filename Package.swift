// swift-tools-version:6.0
import PackageDescription

// No outside Swift packages: C comes from the system (libsqlite3-dev, zlib1g-dev, libpq-dev)
// through system-library targets, everything else is the toolchain's.
//
// The library is a stack of targets whose dependencies point one way (docs/architecture.md
// has the picture); the compiler refuses an import against the arrow. Bottom up:
//   LCTraceFormat    the trace format: event names, keys, the JSON reader and writer
//   LCTraceModel     events, instances, appearances, findings, session statistics
//   LCTraceRules     the rules (one file each) and finding identities
//   LCTraceIngest    bytes to events: files, gzip, lines, the decoder
//   LCTraceStore     the storage seam: protocols, portable values, the shared read queries
//   LCTraceSQLite, LCTracePostgreSQL   one backend each, behind LCTraceStore's protocols
//   LCTraceAnalysis  models and findings built from a store's sessions
//   LCTraceReport    reporters, the report's view model, timelines, baselines, comparison
//   LCTrace          the library's front: the one list of backends, the ingest pipeline
//   LCTraceCLI       the command line: parses, calls the library, prints, exits
// Beside the stack, on LCTraceFormat alone:
//   LCTraceRecorder  the writer an iOS app links (its UIKit hooks in LCTraceRecorder/UIKit)

// Release builds skip the run-time exclusivity checks (8 % of ingest CPU in the hot loops);
// debug builds, and so the tests, keep them. Not on LCTraceFormat and LCTraceRecorder, which
// an app builds as a dependency.
let hotPath: [SwiftSetting] = [.unsafeFlags(["-enforce-exclusivity=unchecked"], .when(configuration: .release))]

let package = Package(
    name: "lctrace",
    // The recorder runs in apps from iOS 13 (viewIsAppearing's first release); the rest of
    // the package builds where Swift 6 does. Linux ignores the list.
    platforms: [.iOS(.v13), .macOS(.v10_15), .tvOS(.v13)],
    products: [
        .executable(name: "lctrace", targets: ["lctrace"]),
        .library(name: "LCTrace", targets: ["LCTrace"]),
        // What an iOS app adds: only LCTraceFormat and zlib come with it (no SQLite, no
        // libpq, no ISA-L), and no unsafe flags, which SwiftPM refuses in a dependency.
        // Static: an app and its extensions each link their own copy, and `swift build
        // --product LCTraceRecorder` builds just it (SwiftPM refuses that for an automatic one).
        .library(name: "LCTraceRecorder", type: .static, targets: ["LCTraceRecorder"]),
    ],
    targets: [
        // C libraries and our own small C.
        .systemLibrary(name: "CSQLite", path: "Sources/CSQLite", providers: [.apt(["libsqlite3-dev"])]),
        .systemLibrary(name: "CZlib", path: "Sources/CZlib", providers: [.apt(["zlib1g-dev"])]),
        // ISA-L's inflate, loaded at run time where libisal is installed (zlib otherwise).
        .target(name: "CFastInflate", path: "Sources/CFastInflate"),
        // SHA-256 on the CPU's SHA extensions where it has them (the Swift code otherwise).
        .target(name: "CFastHash", path: "Sources/CFastHash"),
        // PostgreSQL's client library, for a team database (`--db postgresql://…`).
        .systemLibrary(name: "CPostgreSQL", path: "Sources/CPostgreSQL", pkgConfig: "libpq",
                       providers: [.apt(["libpq-dev"]), .brew(["libpq"])]),

        // The library, bottom up.
        // No hotPath: the recorder's product depends on it, and SwiftPM refuses unsafe flags
        // in a dependency. It has no dynamic exclusivity checks to drop: built with and
        // without the flag, its machine code and its .swiftmodule (the SIL clients inline) are
        // byte for byte the same.
        .target(name: "LCTraceFormat"),
        .target(name: "LCTraceModel", dependencies: ["LCTraceFormat", "CFastHash"], swiftSettings: hotPath),
        .target(name: "LCTraceRules", dependencies: ["LCTraceModel"], swiftSettings: hotPath),
        .target(name: "LCTraceIngest", dependencies: ["LCTraceModel", "CZlib", "CFastInflate"], swiftSettings: hotPath),
        .target(name: "LCTraceStore", dependencies: ["LCTraceRules"], swiftSettings: hotPath),
        .target(name: "LCTraceSQLite", dependencies: ["LCTraceStore", "CSQLite"], swiftSettings: hotPath),
        .target(name: "LCTracePostgreSQL", dependencies: ["LCTraceStore", "CPostgreSQL"], swiftSettings: hotPath),
        .target(name: "LCTraceAnalysis", dependencies: ["LCTraceStore"], swiftSettings: hotPath),
        .target(name: "LCTraceReport", dependencies: ["LCTraceAnalysis", "LCTraceIngest"], swiftSettings: hotPath),
        .target(name: "LCTrace", dependencies: ["LCTraceIngest", "LCTraceReport", "LCTraceSQLite", "LCTracePostgreSQL"],
                swiftSettings: hotPath),

        // The recorder an app links, and its stress and benchmark tool.
        .target(name: "LCTraceRecorder", dependencies: ["LCTraceFormat", "CZlib"],
                resources: [.copy("PrivacyInfo.xcprivacy")]),
        .executableTarget(name: "lctrace-recorder-stress", dependencies: ["LCTraceRecorder"]),

        // The command line and the tools.
        .target(name: "LCTraceCLI", dependencies: ["LCTrace"]),
        .executableTarget(name: "lctrace", dependencies: ["LCTraceCLI"]),
        .target(name: "LCTraceGen", dependencies: ["CZlib", "LCTrace", "LCTraceCLI", "LCTraceRecorder"]),
        .executableTarget(name: "lctrace-gen", dependencies: ["LCTraceGen"]),
        .executableTarget(name: "lctrace-fuzz", dependencies: ["LCTraceGen", "LCTrace", "LCTraceCLI"]),
        // The example of docs/library.md, compiled with the package and run by the tests.
        .executableTarget(name: "lctrace-library-example", dependencies: ["LCTrace"], path: "Examples/LibraryExample"),
        // The heap in use, for tests that bound what a structure keeps (mallinfo2, malloc zones).
        .target(name: "CHeapProbe", path: "Tests/CHeapProbe"),
        .testTarget(name: "LCTraceTests", dependencies: ["LCTrace", "LCTraceCLI", "LCTraceGen", "CHeapProbe"],
                    exclude: ["Fuzz/regressions", "Report/Golden", "Fixtures"]),
        // The recorder's core on any platform: its files read back by lctrace's own decoder and
        // model (the kill test runs lctrace-recorder-stress, which `swift test` builds too).
        .testTarget(name: "LCTraceRecorderTests",
                    dependencies: ["LCTraceRecorder", "LCTraceFormat", "LCTraceModel", "LCTraceRules", "LCTraceIngest", "LCTraceAnalysis"]),
        // The UIKit hooks on an iOS simulator (xcodebuild test); compiles to nothing elsewhere.
        // Decoder and model without a database: neither target's closure has SQLite or libpq.
        .testTarget(name: "LCTraceRecorderUIKitTests",
                    dependencies: ["LCTraceRecorder", "LCTraceFormat", "LCTraceModel", "LCTraceRules", "LCTraceIngest", "LCTraceAnalysis"]),
    ],
    swiftLanguageModes: [.v6]
)
