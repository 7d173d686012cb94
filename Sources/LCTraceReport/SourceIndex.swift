import Foundation
import LCTraceModel

/// Where a class is declared in the app's sources.
struct SourceLocation: Sendable, Equatable {
    /// Relative to the source root, with `/` separators.
    package var path: String
    /// 1-based.
    package var line: Int
}

/// What a walk of the app's sources found (`SourceIndex.scan`).
struct SourceScan: Sendable {
    /// Class → its primary declaration.
    package var classes: [String: SourceLocation] = [:]
    /// The app and scene delegates: their class and declaration.
    package var appDelegate: (cls: String, location: SourceLocation)?
    package var sceneDelegate: (cls: String, location: SourceLocation)?
    /// The walk stopped at `SourceIndex.entryLimit` files and folders.
    package var searchCut = false
}

/// Finds the primary declaration of controller classes in an app's Swift and Objective-C
/// sources (`--source-root`), so SARIF can point at a file: `class Name`, `final class Name`,
/// `open class Name` (with any attributes and access modifiers before it) and
/// `@interface Name :`. Never an `extension Name`, an Objective-C category
/// `@interface Name (…)`, or a longer name that starts with it. With several candidates the
/// first by path wins. Hidden folders (`.git`, `.build`) are not searched.
package enum SourceIndex {
    package static let extensions: Set<String> = ["swift", "h", "m", "mm"]

    static func locate(classes: Set<String>, under root: String) -> [String: SourceLocation] {
        scan(classes: classes, under: root).classes
    }

    /// What one walk of the sources finds: the declarations of `classes`, and the app and
    /// scene delegates (the first class by path whose declaration adopts
    /// `UIApplicationDelegate`, `UIWindowSceneDelegate` or `UISceneDelegate`, else whose name
    /// ends in `AppDelegate` or `SceneDelegate`).
    static func scan(classes: Set<String>, under root: String, limit: Int = entryLimit) -> SourceScan {
        var out = SourceScan()
        var adopts = (app: false, scene: false)
        let (files, cut) = sourceFiles(under: root, limit: limit)
        out.searchCut = cut
        for relative in files {
            let path = (root as NSString).appendingPathComponent(relative)
            // A file that is not UTF-8 is read as Latin-1 (every byte is a character there).
            guard let text = (try? String(contentsOfFile: path, encoding: .utf8))
                ?? (try? String(contentsOfFile: path, encoding: .isoLatin1)) else { continue }
            var number = 0
            text.enumerateLines { line, _ in
                number += 1
                guard let name = declaredClass(in: line) else { return }
                let here = SourceLocation(path: relative, line: number)
                if classes.contains(name), out.classes[name] == nil { out.classes[name] = here }
                if !adopts.app, line.contains("UIApplicationDelegate") {
                    (out.appDelegate, adopts.app) = ((name, here), true)
                } else if out.appDelegate == nil, name.hasSuffix("AppDelegate") {
                    out.appDelegate = (name, here)
                }
                if !adopts.scene, line.contains("UIWindowSceneDelegate") || line.contains("UISceneDelegate") {
                    (out.sceneDelegate, adopts.scene) = ((name, here), true)
                } else if out.sceneDelegate == nil, name.hasSuffix("SceneDelegate") {
                    out.sceneDelegate = (name, here)
                }
            }
            if out.classes.count == classes.count, adopts.app, adopts.scene { break }
        }
        return out
    }

    /// How many files and folders one walk looks at, at most: the root defaults to the Git
    /// work tree, which may be a whole home folder (a dotfiles repository).
    package static let entryLimit = 1_000_000

    /// The source files under `root`, relative, sorted by path, and whether the walk stopped
    /// at `limit` entries.
    static func sourceFiles(under root: String, limit: Int = entryLimit) -> (files: [String], cut: Bool) {
        let url = URL(fileURLWithPath: root)
        guard let walker = FileManager.default.enumerator(at: url, includingPropertiesForKeys: [.isRegularFileKey],
                                                          options: [.skipsHiddenFiles]) else { return ([], false) }
        let base = url.standardizedFileURL.path
        var files: [String] = []
        var seen = 0
        for case let file as URL in walker {
            seen += 1
            if seen > limit { return (files.sorted(), true) }
            guard extensions.contains(file.pathExtension) else { continue }
            let path = file.standardizedFileURL.path
            guard path.hasPrefix(base) else { continue }
            files.append(String(path.dropFirst(base.count)).trimmingCharacters(in: CharacterSet(charactersIn: "/")))
        }
        return (files.sorted(), false)
    }

    /// The class a line declares, if it is a primary class declaration.
    static func declaredClass(in line: String) -> String? {
        let trimmed = line.drop { $0 == " " || $0 == "\t" }
        if trimmed.hasPrefix("@interface") {
            var rest = trimmed.dropFirst("@interface".count)
            guard rest.first == " " || rest.first == "\t" else { return nil }
            rest = rest.drop { $0 == " " || $0 == "\t" }
            let name = rest.prefix { isIdentifier($0) }
            let after = rest.dropFirst(name.count).drop { $0 == " " || $0 == "\t" }
            // `@interface Name : Super` only: `@interface Name (Category)` is a category.
            return !name.isEmpty && after.first == ":" ? String(name) : nil
        }
        // Swift: attributes and modifiers, then `class Name`.
        let modifiers: Set<Substring> = ["public", "internal", "private", "fileprivate", "open", "final", "package"]
        var words = trimmed.split(whereSeparator: { $0 == " " || $0 == "\t" })[...]
        while let first = words.first, first.hasPrefix("@") || modifiers.contains(first) || first.hasPrefix("private(") {
            words = words.dropFirst()
        }
        guard words.first == "class", words.count >= 2 else { return nil }
        let token = words[words.startIndex + 1]
        let name = token.prefix { isIdentifier($0) }
        guard !name.isEmpty else { return nil }
        let next = token.dropFirst(name.count).first
        // `class var`/`class func` are members, not declarations.
        if name == "var" || name == "func" || name == "let" { return nil }
        guard next == nil || next == ":" || next == "<" || next == "{" else { return nil }
        return String(name)
    }

    private static func isIdentifier(_ c: Character) -> Bool { c == "_" || c.isLetter || c.isNumber }
}
