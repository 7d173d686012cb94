import XCTest
@testable import LCTraceStore
@testable import LCTraceSQLite
@testable import LCTraceRules
@testable import LCTraceReport
@testable import LCTraceCLI

// MARK: Reading a SARIF document

fileprivate struct Document {
    var run: [String: Any]
    var results: [[String: Any]]
    var notifications: [[String: Any]]
    var rules: [[String: Any]]
}

fileprivate func parse(_ text: String, file: StaticString = #filePath, line: UInt = #line) throws -> Document {
    let doc = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any], text, file: file, line: line)
    let run = try XCTUnwrap((doc["runs"] as? [[String: Any]])?.first, file: file, line: line)
    let driver = try XCTUnwrap((run["tool"] as? [String: Any])?["driver"] as? [String: Any], file: file, line: line)
    let invocations = run["invocations"] as? [[String: Any]] ?? []
    return Document(run: run, results: try XCTUnwrap(run["results"] as? [[String: Any]], file: file, line: line),
                    notifications: invocations.flatMap { $0["toolExecutionNotifications"] as? [[String: Any]] ?? [] },
                    rules: driver["rules"] as? [[String: Any]] ?? [])
}

fileprivate func physical(_ result: [String: Any]) -> [String: Any]? {
    (result["locations"] as? [[String: Any]])?.first?["physicalLocation"] as? [String: Any]
}

fileprivate func uri(_ result: [String: Any]) -> String? {
    (physical(result)?["artifactLocation"] as? [String: Any])?["uri"] as? String
}

fileprivate func logicalName(_ result: [String: Any]) -> String? {
    ((result["locations"] as? [[String: Any]])?.first?["logicalLocations"] as? [[String: Any]])?.first?["name"] as? String
}

fileprivate func write(_ files: [String: String], under root: String) throws {
    for (path, text) in files {
        let full = root + "/" + path
        try FileManager.default.createDirectory(atPath: (full as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        try text.write(toFile: full, atomically: true, encoding: .utf8)
    }
}

/// The app of SampleTraces as sources: every controller class it names that is not
/// UIKit's, one file each, and an app delegate.
fileprivate func writeSampleApp(at root: String, db: String) throws -> [String: String] {
    var classes: [String] = []
    let q = try SQLiteDatabase(path: db, mode: .readOnly).query(
        "SELECT DISTINCT class FROM instances_v WHERE class IS NOT NULL AND class NOT LIKE 'UI%' ORDER BY class")
    while try q.step() { classes.append(q.text(0)!) }
    XCTAssertGreaterThan(classes.count, 10)
    var files: [String: String] = [:]
    for cls in classes { files["Sources/Screens/\(cls).swift"] = "import UIKit\n\nfinal class \(cls): UIViewController {\n}\n" }
    files["Sources/App/AppDelegate.swift"] = """
        import UIKit

        @main
        class AppDelegate: UIResponder, UIApplicationDelegate {
            func applicationDidBecomeActive(_ application: UIApplication) {}
        }

        """
    try write(files, under: root)
    return files
}

/// A result's fingerprint, or a notification's identity.
fileprivate func fingerprint(_ item: [String: Any]) -> String? {
    (item["partialFingerprints"] as? [String: String])?["lctraceIdentity/v1"]
        ?? (item["properties"] as? [String: Any])?["identity"] as? String
}

/// SARIF for GitHub code scanning, which neither shows nor accepts a result without a
/// physical location: every result sits on a file of the app (a UIKit controller on the
/// nearest app class related to it, a scene rule on the app delegate), what has no file goes
/// to the invocation's notifications, the source root defaults to the Git work tree, and a
/// result's message stays the same for the same identity from run to run.
final class SARIFPlacementTests: TemporaryDirectoryTestCase {
    func loadSamples() {
        XCTAssertEqual(TestSupport.run(["ingest", "-q", "--db", db, TestSupport.root.appendingPathComponent("SampleTraces").path]).status, 0)
    }

    func identities() throws -> [String: String] {
        var out: [String: String] = [:]
        let q = try SQLiteDatabase(path: db, mode: .readOnly).query("SELECT DISTINCT identity, rule FROM findings")
        while try q.step() { out[q.text(0)!] = q.text(1)! }
        return out
    }

    /// With the app's sources every result has a file: UIKit's navigation controller sits on
    /// the controller that presented it, the scene rules on the app delegate; only the
    /// trace-quality findings (LC9xx), which no source line explains, are notifications,
    /// and standard error counts them.
    func testEveryResultOfTheSamplesHasASourceFileAndTheRestAreNotifications() throws {
        loadSamples()
        let root = dir + "/ShopApp"
        _ = try writeSampleApp(at: root, db: db)
        let r = TestSupport.run(["report", "--db", db, "--format", "sarif", "--source-root", root, "--fail-on", "never"])
        XCTAssertEqual(r.status, 0, r.err)
        let doc = try parse(r.out)
        let all = try identities()
        XCTAssertEqual(doc.results.count + doc.notifications.count, all.count, "every identity once, as a result or a notification")
        for result in doc.results {
            XCTAssertNotNil(physical(result), "\(result["ruleId"] ?? "?") on \(logicalName(result) ?? "?") has no file")
            let text = (result["message"] as? [String: Any])?["text"] as? String ?? ""
            XCTAssertEqual(text.split(separator: "\n").first.map(String.init), RuleCatalog.info(result["ruleId"] as? String ?? "")?.summary,
                           "the first line is the same for all of a rule's results: tools group by it")
            XCTAssertFalse((result["ruleId"] as? String ?? "").hasPrefix("LC9"), "trace quality is never a result")
        }
        let quality = all.filter { $0.value.hasPrefix("LC9") }
        XCTAssertEqual(Set(doc.notifications.compactMap(fingerprint)), Set(quality.keys), "the notifications are the LC9xx findings")
        for n in doc.notifications {
            let rule = try XCTUnwrap((n["associatedRule"] as? [String: Any])?["id"] as? String)
            let index = try XCTUnwrap((n["associatedRule"] as? [String: Any])?["index"] as? Int)
            XCTAssertEqual(doc.rules[index]["id"] as? String, rule)
            XCTAssertFalse(((n["message"] as? [String: Any])?["text"] as? String ?? "").isEmpty)
        }
        // UINavigationController (LC301, dismissed) was presented by ProductListViewController.
        let navigation = try XCTUnwrap(doc.results.first { logicalName($0) == "UINavigationController" })
        XCTAssertEqual(uri(navigation), "Sources/Screens/ProductListViewController.swift")
        XCTAssertEqual((physical(navigation)?["region"] as? [String: Int])?["startLine"], 3)
        XCTAssertEqual((navigation["properties"] as? [String: Any])?["placed_on"] as? String, "ProductListViewController")
        let scene = doc.results.filter { ($0["ruleId"] as? String ?? "").hasPrefix("LC5") }
        XCTAssertEqual(scene.count, 6)
        for result in scene { XCTAssertEqual(uri(result), "Sources/App/AppDelegate.swift") }
        XCTAssertTrue(r.err.contains("sarif: \(quality.count) findings without a source file went to toolExecutionNotifications"), r.err)

        // An app class the root does not declare stays off any file (not on its parent's).
        try FileManager.default.removeItem(atPath: root + "/Sources/Screens/PromoCardViewController.swift")
        let without = TestSupport.run(["report", "--db", db, "--format", "sarif", "--source-root", root, "--fail-on", "never"])
        let partial = try parse(without.out)
        XCTAssertFalse(partial.results.contains { logicalName($0) == "PromoCardViewController" })
        let promo = partial.notifications.filter { logicalName($0) == "PromoCardViewController" }
        XCTAssertEqual(promo.count, 3, "LC202, LC205, LC105")
        XCTAssertTrue(without.err.contains("(\(quality.count) about the traces, 3 with no declaration found under \(root))"), without.err)
        XCTAssertTrue(SourcePlacements.isFrameworkClass("UINavigationController"))
        XCTAssertTrue(SourcePlacements.isFrameworkClass("SFSafariViewController"))
        XCTAssertFalse(SourcePlacements.isFrameworkClass("UIntroViewController"), "a capital follows the prefix")
        XCTAssertFalse(SourcePlacements.isFrameworkClass("PromoCardViewController"))
    }

    /// Without --source-root the root is the Git work tree around the current directory (a
    /// `.git` folder, or a `.git` file as in a linked work tree); --source-root still wins;
    /// outside a work tree nothing has a file, and standard error says why.
    func testTheSourceRootDefaultsToTheGitWorkTree() throws {
        loadSamples()
        let repo = dir + "/repo"
        let files = try writeSampleApp(at: repo, db: db)
        try FileManager.default.createDirectory(atPath: repo + "/.git", withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: repo + "/Sources/Screens/Deep", withIntermediateDirectories: true)
        let args = ["report", "--db", db, "--format", "sarif", "--fail-on", "never"]

        func baseURI(_ doc: Document) -> String? {
            ((doc.run["originalUriBaseIds"] as? [String: Any])?["SRCROOT"] as? [String: Any])?["uri"] as? String
        }
        let inside = TestSupport.run(args, workingDirectory: repo + "/Sources/Screens/Deep")
        let found = try parse(inside.out)
        XCTAssertEqual(baseURI(found), URL(fileURLWithPath: repo, isDirectory: true).standardizedFileURL.absoluteString)
        XCTAssertGreaterThan(found.results.count, 20)
        XCTAssertTrue(found.results.allSatisfy { physical($0) != nil })

        // A linked work tree: `.git` is a file naming the repository.
        let linked = dir + "/linked"
        try write(files, under: linked)
        try "gitdir: \(repo)/.git/worktrees/linked\n".write(toFile: linked + "/.git", atomically: true, encoding: .utf8)
        let fromLinked = try parse(TestSupport.run(args, workingDirectory: linked + "/Sources").out)
        XCTAssertEqual(baseURI(fromLinked), URL(fileURLWithPath: linked, isDirectory: true).standardizedFileURL.absoluteString)
        XCTAssertEqual(fromLinked.results.count, found.results.count)

        let chosen = try parse(TestSupport.run(args + ["--source-root", linked], workingDirectory: repo).out)
        XCTAssertEqual(baseURI(chosen), URL(fileURLWithPath: linked, isDirectory: true).standardizedFileURL.absoluteString,
                       "--source-root wins over the work tree")

        let plain = dir + "/plain"
        try FileManager.default.createDirectory(atPath: plain, withIntermediateDirectories: true)
        // A root inside a work tree: the paths are the repository's (code scanning reads them
        // from its top), only that folder is searched.
        let below = try parse(TestSupport.run(args + ["--source-root", repo + "/Sources/Screens"], workingDirectory: plain).out)
        XCTAssertEqual(baseURI(below), URL(fileURLWithPath: repo, isDirectory: true).standardizedFileURL.absoluteString)
        let nav = try XCTUnwrap(below.results.first { logicalName($0) == "UINavigationController" })
        XCTAssertEqual(uri(nav), "Sources/Screens/ProductListViewController.swift")
        XCTAssertFalse(below.results.contains { uri($0) == "Sources/App/AppDelegate.swift" }, "the app delegate is outside the root")
        let outside = TestSupport.run(args, workingDirectory: plain)
        let none = try parse(outside.out)
        XCTAssertNil(baseURI(none))
        XCTAssertEqual(none.results.count, 0, "no result without a file")
        XCTAssertEqual(none.notifications.count, try identities().count)
        XCTAssertTrue(outside.err.contains("sarif: \(none.notifications.count) findings without a source file went to toolExecutionNotifications"), outside.err)
        XCTAssertTrue(outside.err.contains("--source-root"), outside.err)
    }
}

/// SARIF's message from run to run (a rule scenario in two databases).
final class SARIFMessageTests: RuleTestCase {
    /// The same defect in a later run with more occurrences, other times and another first
    /// session: its result's message is the same text (the counts are in `properties`), so
    /// `sarif diff` sees it persist.
    func testTheMessageOfAnIdentityIsTheSameFromRunToRun() throws {
        let dir = TestSupport.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let root = dir + "/App"
        try write(["DetailVC.swift": "class DetailVC: UIViewController {}\n", "RootVC.swift": "class RootVC: UIViewController {}\n"],
                  under: root)
        var first = app()
        push(&first, 1000, "0xb")
        pop(&first, 3000, "0xb", deinitAfter: nil)
        end(&first, 9000)
        var second = app()
        second.sid = "S0"
        second.lines = second.lines.map { $0.replacingOccurrences(of: "\"sid\":\"S1\"", with: "\"sid\":\"S0\"") }
        push(&second, 2000, "0xb")
        pop(&second, 7000, "0xb", deinitAfter: nil)
        end(&second, 40_000)
        TestSupport.writeLines(first.lines, to: dir + "/first.jsonl")
        TestSupport.writeLines(second.lines, to: dir + "/second.jsonl")
        let one = dir + "/one.db", two = dir + "/two.db"
        XCTAssertEqual(TestSupport.run(["ingest", "-q", "--db", one, dir + "/first.jsonl"]).status, 0)
        XCTAssertEqual(TestSupport.run(["ingest", "-q", "--db", two, dir + "/second.jsonl", dir + "/first.jsonl"]).status, 0)
        func leak(_ path: String) throws -> [String: Any] {
            let out = TestSupport.run(["report", "--db", path, "--format", "sarif", "--source-root", root, "--fail-on", "never"]).out
            return try XCTUnwrap(try parse(out).results.first { $0["ruleId"] as? String == "LC301" }, out)
        }
        let (before, after) = (try leak(one), try leak(two))
        XCTAssertEqual(fingerprint(before), fingerprint(after))
        XCTAssertEqual((before["properties"] as? [String: Any])?["occurrences"] as? Int, 1)
        XCTAssertEqual((after["properties"] as? [String: Any])?["occurrences"] as? Int, 2)
        let text = (before["message"] as? [String: Any])?["text"] as? String
        XCTAssertEqual(text, (after["message"] as? [String: Any])?["text"] as? String)
        XCTAssertEqual(text, "released controller not deallocated\nDetailVC (pop) in com.example.app")
        let example = (after["properties"] as? [String: Any])?["example"] as? String
        XCTAssertTrue(example?.contains("not deallocated") == true, "the first occurrence's own words stay in properties: \(example ?? "nil")")
    }
}

/// The team database places findings as SQLite does: the related controllers come from its
/// `instances` table.
final class SARIFPlacementPostgreSQLTests: PostgreSQLTestCase {
    func testPostgreSQLPlacesEveryResultAsSQLiteDoes() throws {
        let samples = TestSupport.root.appendingPathComponent("SampleTraces").path
        let server = try freshDatabase()
        XCTAssertEqual(TestSupport.run(["ingest", "-q", "--db", db, samples]).status, 0)
        XCTAssertEqual(TestSupport.run(["ingest", "-q", "--db", server, samples]).status, 0)
        let root = dir + "/ShopApp"
        _ = try writeSampleApp(at: root, db: db)
        let args = ["report", "--format", "sarif", "--source-root", root, "--fail-on", "never", "--db"]
        let (local, team) = (TestSupport.run(args + [db]), TestSupport.run(args + [server]))
        XCTAssertEqual(team.status, 0, team.err)
        XCTAssertEqual(team.out, local.out)
        let navigation = try XCTUnwrap(try parse(team.out).results.first { logicalName($0) == "UINavigationController" })
        XCTAssertEqual(uri(navigation), "Sources/Screens/ProductListViewController.swift")
    }
}
