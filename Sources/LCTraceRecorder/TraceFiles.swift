import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The trace files of one recorder's directory: their names, creation with the right
/// protection and backup flags, appends, and the byte cap.
///
/// A name carries the app, the session's start (UTC, so names sort as time does), the
/// session and the part: `com.example.shop_20261102T101503Z_5E0C7B9A-…_0003.jsonl.gz`.
/// Only names of that shape are ever listed or deleted: other files in the folder are left alone.
struct TraceFileName: Comparable {
    var app: String
    var stamp: String
    var session: String
    var part: Int

    static let suffix = ".jsonl.gz"

    var text: String { "\(app)_\(stamp)_\(session)_\(TraceFileName.partText(part))\(TraceFileName.suffix)" }

    init(app: String, stamp: String, session: String, part: Int) {
        self.app = TraceFileName.safe(app); self.stamp = stamp; self.session = TraceFileName.safe(session); self.part = part
    }

    /// Parses a name this recorder writes; nil for anything else.
    init?(parsing name: String) {
        guard name.hasSuffix(TraceFileName.suffix) else { return nil }
        let fields = name.dropLast(TraceFileName.suffix.count).split(separator: "_", omittingEmptySubsequences: false)
        guard fields.count == 4, let part = Int(fields[3]), fields[3].count == 4 || part > 9999,
              fields[1].count == 16, fields[1].hasSuffix("Z") else { return nil }
        app = String(fields[0]); stamp = String(fields[1]); session = String(fields[2]); self.part = part
    }

    /// Oldest first: by session start, then session, then part.
    static func < (a: TraceFileName, b: TraceFileName) -> Bool {
        (a.stamp, a.session, a.part) < (b.stamp, b.session, b.part)
    }

    static func partText(_ part: Int) -> String {
        let digits = String(part)
        return digits.count >= 4 ? digits : String(repeating: "0", count: 4 - digits.count) + digits
    }

    /// Letters, digits, `.` and `-`; anything else (the `_` separator included) becomes `-`.
    static func safe(_ text: String) -> String {
        let mapped = text.unicodeScalars.map { s -> Character in
            let ok = (s >= "a" && s <= "z") || (s >= "A" && s <= "Z") || (s >= "0" && s <= "9") || s == "." || s == "-"
            return ok ? Character(s) : "-"
        }
        return mapped.isEmpty ? "-" : String(mapped.prefix(100))
    }
}

/// An open trace file: appends only, no lock held across suspension (a plain descriptor, no
/// `flock`, no SQLite: an app killed with `0xdead10cc` is one that held a file lock).
final class OpenTraceFile {
    let url: URL
    let name: TraceFileName
    private let fd: Int32
    private(set) var size: Int
    /// `t` when the file was opened, for rotation by age.
    let openedAt: Int64

    init(directory: URL, name: TraceFileName, openedAt: Int64) throws {
        url = directory.appendingPathComponent(name.text)
        self.name = name
        self.openedAt = openedAt
        TraceDirectory.createProtected(url)
        fd = url.path.withCString { open($0, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o644) }
        guard fd >= 0 else { throw RecorderError.cannotOpen(url.path, errno) }
        var info = stat()
        size = fstat(fd, &info) == 0 ? Int(info.st_size) : 0
        TraceDirectory.excludeFromBackup(url)
    }

    /// Appends all of `bytes`; false on an error (the caller counts it and starts a new file).
    func append(_ bytes: UnsafeRawBufferPointer) -> Bool {
        var offset = 0
        while offset < bytes.count {
            let n = write(fd, bytes.baseAddress! + offset, bytes.count - offset)
            if n < 0 {
                if errno == EINTR { continue }
                return false
            }
            offset += n
        }
        size += bytes.count
        return true
    }

    func close() {
        #if canImport(Glibc)
        _ = Glibc.close(fd)
        #else
        _ = Darwin.close(fd)
        #endif
    }
}

public enum RecorderError: Error, CustomStringConvertible, LocalizedError {
    case cannotCreateDirectory(String, String)
    case cannotOpen(String, Int32)
    /// `RecorderConfiguration.sessionID` is not 1 to 128 characters long (the format's `sid`).
    case badSessionID(Int)

    public var description: String {
        switch self {
        case .cannotCreateDirectory(let path, let why): return "cannot create \(path): \(why)"
        case .cannotOpen(let path, let code): return "cannot open \(path): \(String(cString: strerror(code)))"
        case .badSessionID(let length):
            return "sessionID must be 1 to 128 characters long (trace format v1's sid), not \(length): leave it to the default, a new UUID"
        }
    }

    /// What `localizedDescription` (which apps log) says: the same words.
    public var errorDescription: String? { description }

    /// An error's reason in a few words: the system's for a file system error (a Foundation
    /// error's underlying POSIX error), not the whole error dumped.
    static func reason(_ error: Error) -> String {
        let ns = error as NSError
        if let underlying = ns.userInfo[NSUnderlyingErrorKey] as? Error {
            // A POSIXError value on Linux, an NSError on Apple platforms.
            let posix = underlying as NSError
            if posix.domain == NSPOSIXErrorDomain { return String(cString: strerror(Int32(posix.code))) }
        }
        if ns.domain == NSPOSIXErrorDomain { return String(cString: strerror(Int32(ns.code))) }
        return ns.localizedDescription
    }
}

/// The directory's set-up and listing.
enum TraceDirectory {
    /// Creates the directory with the protection class that lets a locked device go on
    /// writing (files made inside inherit it) and excludes it from backups.
    static func prepare(_ directory: URL) throws {
        var attributes: [FileAttributeKey: Any] = [:]
        #if os(iOS) || os(tvOS) || os(watchOS) || os(visionOS)
        attributes[.protectionKey] = FileProtectionType.completeUntilFirstUserAuthentication
        #endif
        do {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true, attributes: attributes)
            #if os(iOS) || os(tvOS) || os(watchOS) || os(visionOS)
            // An existing directory keeps its class unless set again.
            try? FileManager.default.setAttributes(attributes, ofItemAtPath: directory.path)
            #endif
        } catch {
            throw RecorderError.cannotCreateDirectory(directory.path, RecorderError.reason(error))
        }
        excludeFromBackup(directory)
    }

    /// Creates an empty file with *complete until first user authentication* (never
    /// *complete*, which a locked device cannot write).
    static func createProtected(_ url: URL) {
        #if os(iOS) || os(tvOS) || os(watchOS) || os(visionOS)
        if !FileManager.default.fileExists(atPath: url.path) {
            FileManager.default.createFile(atPath: url.path, contents: nil,
                                           attributes: [.protectionKey: FileProtectionType.completeUntilFirstUserAuthentication])
        }
        #endif
    }

    /// Sets `isExcludedFromBackup` (on every new file: some file operations reset it).
    static func excludeFromBackup(_ url: URL) {
        #if canImport(Darwin)
        var values = URLResourceValues()
        values.isExcludedFromBackup = true
        var url = url
        try? url.setResourceValues(values)
        #endif
    }

    /// The trace files in `directory` with their sizes, oldest first.
    static func list(_ directory: URL) -> [(name: TraceFileName, url: URL, size: Int)] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
        var files: [(name: TraceFileName, url: URL, size: Int)] = []
        for text in names {
            guard let name = TraceFileName(parsing: text) else { continue }
            let url = directory.appendingPathComponent(text)
            var info = stat()
            guard stat(url.path, &info) == 0 else { continue }
            files.append((name, url, Int(info.st_size)))
        }
        return files.sorted { $0.name < $1.name }
    }
}
