import Foundation
import LCTraceReport

/// `report --source-root DIR`, and where the app's sources are without it: the Git work tree
/// around the directory lctrace was started in (CI jobs run in the app's checkout), found by
/// looking for `.git` upwards, with no `git` process.
enum SourceRootOption {
    static let option = OptionSpec("source-root", value: "DIR",
                                   help: "SARIF: place each result on a file of the app's sources under DIR (default: the Git work tree around the current directory).")

    /// The source root: `--source-root` (which must be a directory), else, when the format
    /// places findings in the sources, the work tree around `context.workingDirectory`.
    static func value(_ args: ParsedArguments, _ context: CommandContext, wanted: Bool) throws -> String? {
        if let root = args.value("source-root") {
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: root, isDirectory: &isDirectory), isDirectory.boolValue else {
                throw UsageError("--source-root '\(root)' is not a directory")
            }
            return root
        }
        return wanted ? gitWorkTree(around: context.workingDirectory) : nil
    }

    /// The nearest directory from `start` upwards holding `.git`: a folder (a clone), or a
    /// file starting `gitdir:` (a linked work tree, a submodule). Nil outside any.
    static func gitWorkTree(around start: String) -> String? {
        var dir = URL(fileURLWithPath: start, isDirectory: true).standardizedFileURL
        while true {
            let git = dir.appendingPathComponent(".git").path
            var isDirectory: ObjCBool = false
            if FileManager.default.fileExists(atPath: git, isDirectory: &isDirectory) {
                if isDirectory.boolValue { return dir.path }
                if let head = FileHandle(forReadingAtPath: git).flatMap({ try? $0.read(upToCount: 7) }),
                   String(decoding: head, as: UTF8.self) == "gitdir:" {
                    return dir.path
                }
            }
            let parent = dir.deletingLastPathComponent()
            if parent.path == dir.path { return nil }
            dir = parent
        }
    }

    /// What standard error says when identities had no file and went to the notifications,
    /// and when the walk of the sources stopped at its limit.
    static func notice(_ placements: SourcePlacements, _ view: ReportView, root: String?, given: Bool) -> String? {
        var text = ""
        if placements.searchCut, let root {
            text += "sarif: stopped searching \(root) after \(NumberFormat.thousands(SourceIndex.entryLimit)) files and folders; "
                + "give --source-root the app's folder\n"
        }
        let unplaced = placements.unplaced(view)
        let count = unplaced.aboutTraces + unplaced.notFound
        guard count > 0 else { return text.isEmpty ? nil : text }
        var line = "sarif: \(count) finding\(count == 1 ? "" : "s") without a source file went to toolExecutionNotifications"
        if root == nil {
            line += " (no source root: not in a Git work tree; give --source-root DIR)"
        } else {
            var why: [String] = []
            if unplaced.aboutTraces > 0 { why.append("\(unplaced.aboutTraces) about the traces") }
            if unplaced.notFound > 0 {
                why.append("\(unplaced.notFound) with no declaration found under \(root!)\(given ? "" : " (the Git work tree)")")
            }
            line += " (\(why.joined(separator: ", ")))"
        }
        return text + line + "\n"
    }
}
