import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// What the session record says about the app and the device. Class names and ids are all
/// the recorder ever writes besides this: never user data, never view contents.
public struct SessionInfo: Sendable, Equatable {
    /// Bundle id, e.g. `com.example.shop`.
    public var app: String
    public var appVersion: String
    public var build: String
    /// e.g. `iOS`.
    public var os: String
    /// e.g. `27.1`.
    public var osVersion: String
    /// The SDK the app was built with, e.g. `27.0` (lctrace's LC402, LC501 and LC502 need it).
    public var sdk: String?
    /// Model id, e.g. `iPhone16,2`.
    public var device: String
    /// Only in an app extension: its extension point, e.g. `com.apple.share-services`.
    public var extensionPoint: String?

    public init(app: String, appVersion: String, build: String, os: String, osVersion: String, sdk: String?,
                device: String, extensionPoint: String? = nil) {
        self.app = app; self.appVersion = appVersion; self.build = build; self.os = os
        self.osVersion = osVersion; self.sdk = sdk; self.device = device; self.extensionPoint = extensionPoint
    }

    /// This process: the main bundle's Info.plist (id, versions, the SDK Xcode wrote as
    /// `DTPlatformVersion`, an extension's `NSExtensionPointIdentifier`), the OS version and
    /// the hardware model (the simulated one in a simulator).
    public static func current(bundle: Bundle = .main) -> SessionInfo {
        let info = bundle.infoDictionary ?? [:]
        let version = ProcessInfo.processInfo.operatingSystemVersion
        let osVersion = version.patchVersion > 0
            ? "\(version.majorVersion).\(version.minorVersion).\(version.patchVersion)"
            : "\(version.majorVersion).\(version.minorVersion)"
        let point = (info["NSExtension"] as? [String: Any])?["NSExtensionPointIdentifier"] as? String
        return SessionInfo(app: bundle.bundleIdentifier ?? ProcessInfo.processInfo.processName,
                           appVersion: info["CFBundleShortVersionString"] as? String ?? "",
                           build: info["CFBundleVersion"] as? String ?? "",
                           os: operatingSystemName, osVersion: osVersion,
                           sdk: info["DTPlatformVersion"] as? String,
                           device: deviceModel, extensionPoint: point)
    }

    static var operatingSystemName: String {
        #if targetEnvironment(macCatalyst)
        return "macCatalyst"
        #elseif os(iOS)
        return "iOS"
        #elseif os(tvOS)
        return "tvOS"
        #elseif os(watchOS)
        return "watchOS"
        #elseif os(visionOS)
        return "visionOS"
        #elseif os(macOS)
        return "macOS"
        #elseif os(Linux)
        return "Linux"
        #else
        return "unknown"
        #endif
    }

    /// `uname`'s machine (`iPhone16,2`); a simulator says `arm64` there, so its model comes
    /// from the environment the simulator sets.
    static var deviceModel: String {
        if let simulated = ProcessInfo.processInfo.environment["SIMULATOR_MODEL_IDENTIFIER"] { return simulated }
        var names = utsname()
        uname(&names)
        return withUnsafeBytes(of: &names.machine) { raw in
            String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
        }
    }
}

/// How the recorder records, buffers and keeps files. The defaults suit a QA or debug build.
public struct RecorderConfiguration: Sendable {
    /// Where trace files go. Nil: `Application Support/lctrace` (excluded from backup; on iOS
    /// with the `completeUntilFirstUserAuthentication` protection class).
    public var directory: URL?
    public var session: SessionInfo
    /// The session id (`sid`); a fresh UUID by default.
    public var sessionID: String
    /// Events the buffer holds between the calling threads and the writer; more are dropped
    /// (and counted), never waited for.
    public var bufferCapacity: Int = 8192
    /// A gzip member is written at least this often while events come (seconds).
    public var flushInterval: Double = 1.0
    /// …and as soon as this many events wait.
    public var flushEventCount: Int = 1000
    /// A file is finished and the next one started past this many (compressed) bytes…
    public var rotateBytes: Int = 4 << 20
    /// …or this many seconds after it was started.
    public var rotateAge: Double = 3600
    /// Trace files kept in `directory` at most (bytes); the oldest finished files go first.
    public var maxStoredBytes: Int = 64 << 20
    /// zlib level, 1 (fast) to 9 (small); 1 keeps the writer cheap and JSON lines compress well anyway.
    public var compressionLevel: Int = 1
    /// Records `viewWillLayoutSubviews`/`viewDidLayoutSubviews` (high volume; off by default).
    public var recordsLayout: Bool = false
    /// Which controller classes are not recorded (private UIKit and input-system ones by default).
    public var classFilter = ClassFilter()
    /// The clock of `t` (injectable: tests, simulators).
    public var clock: MonotonicClock = .system
    /// The clock of `wall`.
    public var wallClock: WallClock = .system
    /// Called on the writer thread after each gzip member is written (diagnostics, tests).
    public var flushObserver: (@Sendable (FlushReport) -> Void)?

    public init(session: SessionInfo = .current(), directory: URL? = nil, sessionID: String = UUID().uuidString) {
        self.session = session
        self.directory = directory
        self.sessionID = sessionID
    }

    /// `Application Support/lctrace` of this app.
    public static var defaultDirectory: URL {
        let support = FileManager.default.urls(for: .applicationSupportDirectory, in: .userDomainMask).first
            ?? URL(fileURLWithPath: NSTemporaryDirectory())
        return support.appendingPathComponent("lctrace", isDirectory: true)
    }
}

/// One gzip member written: what a crash or kill from now on can no longer lose.
public struct FlushReport: Sendable {
    /// The file the member went to.
    public var file: URL
    /// The highest `seq` in the member, and how many events it holds.
    public var lastSeq: Int64
    public var events: Int
    /// The member's compressed bytes, and the file's size after it.
    public var bytes: Int
    public var fileBytes: Int
}
