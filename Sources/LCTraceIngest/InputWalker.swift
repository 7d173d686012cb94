#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import LCTraceModel

/// A path named on the command line, or met in a directory, that cannot be loaded.
package struct InputProblem: Sendable, Equatable {
    package var path: String
    package var reason: String
    /// True when nothing is there (no such file or directory); false when something is there
    /// that cannot be read (permissions, a FIFO, a broken link).
    package var missing: Bool
}

/// Expands the paths given to `lctrace ingest` into the inputs to load. Directories are
/// walked with the system's own calls, by bytes: a name that is not UTF-8 is loaded like
/// any other, a symbolic link to a directory is followed (a directory reached twice, as
/// through a link loop, is walked once), and every path that cannot be used is returned as
/// a problem, never skipped in silence.
package enum InputWalker {
    /// File names a directory walk loads: trace files, tar archives of them (`.tar.gz` among
    /// the `.gz`), and zip archives, which the ingest refuses rather than pass over in silence.
    static let suffixes: [[UInt8]] = [".gz", ".jsonl", ".tar", ".tgz", ".zip"].map { Array($0.utf8) }

    /// Files as given (when regular), directories recursively (`*.gz`, `*.jsonl`, `*.jsonl.gz`,
    /// `*.tar`, `*.tgz`, `*.zip`, in byte order of their paths), `-` for standard input.
    package static func expand(_ paths: [String]) -> (inputs: [InputLocation], missing: [InputProblem]) {
        var walk = Walk()
        for path in paths {
            if path == "-" { walk.inputs.append(.standardInput); continue }
            walk.top(Array(path.utf8))
        }
        return (walk.inputs, walk.problems)
    }

    /// Identity of a directory: (device, inode).
    private struct DirectoryID: Hashable { let device: UInt64; let inode: UInt64 }

    private struct Walk {
        package var inputs: [InputLocation] = []
        package var problems: [InputProblem] = []
        var walked = Set<DirectoryID>()

        package mutating func problem(_ path: [UInt8], _ reason: String, missing: Bool = false) {
            problems.append(InputProblem(path: InputLocation.path(path).description, reason: reason, missing: missing))
        }

        /// A path named on the command line: any regular file, whatever its name.
        package mutating func top(_ path: [UInt8]) {
            guard let st = Self.status(path) else {
                let code = errno
                problem(path, code == ENOENT ? "no such file or directory" : "cannot read: \(String(cString: strerror(code)))",
                        missing: code == ENOENT || code == ENOTDIR)
                return
            }
            switch st.st_mode & S_IFMT {
            case S_IFREG: inputs.append(InputLocation.path(path))
            case S_IFDIR: directory(path, st)
            default: problem(path, "not a regular file (\(FileKind.name(st.st_mode)))")
            }
        }

        /// Every trace file below `path`, sorted by path.
        package mutating func directory(_ path: [UInt8], _ st: stat) {
            var found: [[UInt8]] = []
            collect(path, st, into: &found)
            inputs += found.sorted { $0.lexicographicallyPrecedes($1) }.map(InputLocation.path)
        }

        package mutating func collect(_ path: [UInt8], _ st: stat, into found: inout [[UInt8]]) {
            guard walked.insert(DirectoryID(device: UInt64(st.st_dev), inode: UInt64(st.st_ino))).inserted else { return }
            guard let dir = path.withCPath({ opendir($0) }) else {
                problem(path, "cannot read directory: \(String(cString: strerror(errno)))")
                return
            }
            var names: [[UInt8]] = []
            while true {
                errno = 0
                guard let entry = readdir(dir) else {
                    if errno != 0 { problem(path, "cannot read directory: \(String(cString: strerror(errno)))") }
                    break
                }
                let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                    Array(raw.prefix { $0 != 0 })
                }
                if name == [0x2e] || name == [0x2e, 0x2e] { continue }
                names.append(name)
            }
            closedir(dir)
            let base = path.last == 0x2f ? path : path + [0x2f]
            for name in names {
                let full = base + name
                let wanted = InputWalker.suffixes.contains { name.count > $0.count && name.suffix($0.count).elementsEqual($0) }
                // stat follows symbolic links: a link to a directory is walked, to a file loaded.
                guard let child = Self.status(full) else {
                    let code = errno
                    if wanted { problem(full, Self.isLink(full) ? "broken symbolic link" : "cannot read: \(String(cString: strerror(code)))") }
                    continue
                }
                switch child.st_mode & S_IFMT {
                case S_IFDIR: collect(full, child, into: &found)
                case S_IFREG where wanted: found.append(full)
                default:
                    if wanted { problem(full, "not a regular file (\(FileKind.name(child.st_mode)))") }
                }
            }
        }

        package static func status(_ path: [UInt8]) -> stat? {
            var st = stat()
            return path.withCPath({ stat($0, &st) }) == 0 ? st : nil
        }

        static func isLink(_ path: [UInt8]) -> Bool {
            var st = stat()
            return path.withCPath({ lstat($0, &st) }) == 0 && (st.st_mode & S_IFMT) == S_IFLNK
        }
    }
}

package extension Array where Element == UInt8 {
    /// Calls `body` with these bytes as a NUL-terminated C path.
    func withCPath<R>(_ body: (UnsafePointer<CChar>) -> R) -> R {
        (self + [0]).withUnsafeBufferPointer { buffer in
            buffer.withMemoryRebound(to: CChar.self) { body($0.baseAddress!) }
        }
    }
}
