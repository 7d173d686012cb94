import Foundation
import XCTest

/// The layers' two rules that the compiler's import check cannot see (docs/architecture.md,
/// "Targets"): SwiftPM accepts an import of any target in a dependency's closure, so a command
/// or the generator could name a backend through LCTrace without anyone noticing.
final class LayerTests: XCTestCase {
    static let backends: Set<String> = ["LCTraceSQLite", "LCTracePostgreSQL"]
    static let cModules: Set<String> = ["CSQLite", "CPostgreSQL", "CZlib", "CFastInflate", "CFastHash"]

    /// (target folder, path inside Sources, imported module, the import line) of every import.
    static func imports() throws -> [(target: String, path: String, module: String, line: String)] {
        let sources = TestSupport.root.appendingPathComponent("Sources")
        var found: [(String, String, String, String)] = []
        let walker = FileManager.default.enumerator(atPath: sources.path)
        while let path = walker?.nextObject() as? String {
            guard path.hasSuffix(".swift") else { continue }
            let text = try String(contentsOf: sources.appendingPathComponent(path), encoding: .utf8)
            for line in text.split(separator: "\n") {
                let words = line.split(separator: " ").map(String.init)
                guard let at = words.firstIndex(of: "import"), at + 1 < words.count,
                      words[..<at].allSatisfy({ $0.hasPrefix("@") || ["public", "package", "internal", "private", "fileprivate"].contains($0) })
                else { continue }
                found.append((String(path.prefix { $0 != "/" }), path, words[at + 1], String(line)))
            }
        }
        return found
    }

    /// Only the backends themselves and the one list of factories (LCTrace/Backends.swift)
    /// import a backend: a third backend is one new target and one line there.
    func testOnlyTheWiringListNamesABackend() throws {
        let strays = try Self.imports().filter {
            Self.backends.contains($0.module) && !Self.backends.contains($0.target) && $0.path != "LCTrace/Backends.swift"
        }
        XCTAssertEqual(strays.map { "Sources/\($0.path): \($0.line)" }, [])
    }

    /// C modules stay behind their Swift owners: imported `internal` (or narrower), never
    /// re-exported to the targets above.
    func testCModulesAreImportedInternal() throws {
        let c = try Self.imports().filter { Self.cModules.contains($0.module) }
        XCTAssertFalse(c.isEmpty)
        let open = c.filter { !($0.line.hasPrefix("internal import") || $0.line.hasPrefix("private import")
                                || $0.line.hasPrefix("fileprivate import")) }
        XCTAssertEqual(open.map { "Sources/\($0.path): \($0.line)" }, [])
    }
}
