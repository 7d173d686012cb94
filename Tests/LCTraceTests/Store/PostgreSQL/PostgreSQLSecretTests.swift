import XCTest
@testable import LCTraceStore
@testable import LCTracePostgreSQL
@testable import LCTrace

/// A PostgreSQL password never reaches an output: messages, hints, follow-up commands, the
/// reports' files. Follow-up commands name the URL without it, so pasting one still runs
/// (libpq takes the password from PGPASSWORD, ~/.pgpass or passfile).
final class PostgreSQLSecretTests: PostgreSQLTestCase {
    static let secret = "Hunter2-SECRET"

    /// The URL as shown: no user password, no password parameter, whatever its spelling;
    /// everything else kept (no server needed).
    func testTheShownURLHoldsNoPassword() throws {
        let kind = PostgreSQLBackendKind()
        let s = Self.secret
        let cases: [(String, String)] = [
            ("postgresql://qa:\(s)@db.example:5432/lc", "postgresql://qa@db.example:5432/lc"),
            ("postgres://qa:\(s)@db.example/lc?sslmode=require", "postgres://qa@db.example/lc?sslmode=require"),
            ("postgresql://:\(s)@db.example/lc", "postgresql://db.example/lc"),
            ("postgresql://qa@db.example/lc?password=\(s)", "postgresql://qa@db.example/lc"),
            ("postgresql://qa@db.example/lc?sslmode=require&password=\(s)&connect_timeout=3",
             "postgresql://qa@db.example/lc?sslmode=require&connect_timeout=3"),
            ("postgresql://qa@db.example/lc?pass%77ord=\(s)", "postgresql://qa@db.example/lc"),
            ("postgresql://qa@db.example/lc?sslpassword=\(s)&options=-csearch_path%3Dx", "postgresql://qa@db.example/lc?options=-csearch_path%3Dx"),
            ("postgresql://qa:\(s)@h1:5432,h2:5433/lc?password=\(s)", "postgresql://qa@h1:5432,h2:5433/lc"),
            ("postgresql://qa@db.example/lc", "postgresql://qa@db.example/lc"),
        ]
        for (url, expected) in cases {
            XCTAssertEqual(kind.shown(url), expected, url)
            XCTAssertFalse(kind.shown(url).contains(s), url)
        }
    }

    /// A scheme in capitals is the same URL (libpq knows only the lower-case one, and took the
    /// whole URL, password included, for a database name on its default server).
    func testAnUpperCaseSchemeIsTheSameURL() throws {
        let url = try freshDatabase()
        let samples = TestSupport.root.appendingPathComponent("SampleTraces").path
        XCTAssertEqual(TestSupport.run(["ingest", "-q", "--db", url, samples]).status, 0)
        let upper = "POSTGRESQL" + url.drop { $0 != ":" }
        XCTAssertTrue(upper.hasPrefix("POSTGRESQL://"), upper)
        let r = TestSupport.run(["sessions", "--db", upper], env: ["PGHOST": "/nonexistent", "PGPORT": "1"])
        XCTAssertEqual(r.status, 0, r.err)
        XCTAssertEqual(r.out, TestSupport.run(["sessions", "--db", url]).out)
    }

    /// `url` with the test password as the user's and as a parameter (the test server trusts
    /// its user, so the password is carried but never asked for).
    private func secretURL() throws -> String {
        let url = try freshDatabase()
        let withUser = url.replacingOccurrences(of: "://lctrace@", with: "://lctrace:\(Self.secret)@")
        XCTAssertNotEqual(withUser, url, "the test URL names its user as lctrace@: \(url)")
        return withUser + "&password=\(Self.secret)"
    }

    /// Every command, hint and report file on a URL with a password: the password is nowhere,
    /// also when the URL came from $LCTRACE_DB; a follow-up command pasted as printed runs.
    func testNoOutputHoldsThePassword() throws {
        let url = try secretURL()
        let samples = TestSupport.root.appendingPathComponent("SampleTraces").path
        var outputs: [(String, String)] = []
        func run(_ args: [String], env: [String: String] = [:]) -> (status: Int32, out: String, err: String) {
            let r = TestSupport.run(args, env: env)
            outputs.append(("\(args)", r.out + r.err))
            return r
        }
        XCTAssertEqual(run(["ingest", "-q", "--db", url, samples]).status, 0)
        // A file whose rejected lines outnumber the examples shown: a follow-up query names the database.
        let bad = dir + "/bad.jsonl"
        TestSupport.writeLines((0..<40).map { "not json \($0)" }, to: bad)
        _ = run(["ingest", "--db", url, bad])

        let report = run(["report", "--db", url, "--fail-on", "never"])
        XCTAssertEqual(report.status, 0, report.err)
        XCTAssertTrue(report.out.contains("lctrace query --db"), "the text report has follow-up commands: \(report.out)")
        _ = run(["report", "--fail-on", "never"], env: ["LCTRACE_DB": url])
        let html = dir + "/r.html"
        XCTAssertEqual(run(["report", "--db", url, "--format", "html", "-o", html, "--fail-on", "never"]).status, 0)
        let page = try String(contentsOfFile: html, encoding: .utf8)
        XCTAssertTrue(page.contains("lctrace timeline --db"), "the HTML report has follow-up commands")
        outputs.append(("r.html", page))
        let baseline = dir + "/b.json"
        XCTAssertEqual(run(["baseline", "--db", url, "-o", baseline]).status, 0)
        outputs.append(("b.json", try String(contentsOfFile: baseline, encoding: .utf8)))
        _ = run(["report", "--db", url, "--format", "json", "--fail-on", "never"])
        _ = run(["report", "--db", url, "--format", "sarif", "--fail-on", "never"])
        _ = run(["sessions", "--db", url])
        // Hints and errors that name the database.
        XCTAssertEqual(run(["report", "--db", url, "--build", "no-such-build"]).status, 66)
        XCTAssertEqual(run(["report", "--db", url, "--session", "zzzz-none"]).status, 66)
        XCTAssertEqual(run(["report", "--db", url, "--class", "NoSuchViewControler"]).status, 66)
        XCTAssertEqual(run(["report", "--session", ""], env: ["LCTRACE_DB": url]).status != 0, true)
        XCTAssertEqual(run(["timeline", "--db", url]).status, 64)
        XCTAssertEqual(run(["timeline", "--db", url, "--session", "zzzz-none"]).status, 66)  // a filter naming nothing (item 3)
        let sid = try XCTUnwrap(TestSupport.run(["sessions", "--db", url, "--format", "csv"]).out
            .split(separator: "\n").dropFirst().first?.split(separator: ",").first.map(String.init))
        XCTAssertEqual(run(["timeline", "--db", url, "--session", sid, "--around", "999999999"]).status, 64)
        XCTAssertEqual(run(["timeline", "--db", url, "--session", sid, "--lanes", "0"]).status, 0)
        XCTAssertEqual(run(["export", "--db", url]).status, 64)
        XCTAssertEqual(run(["export", "--db", url, "--build", "no-such-build", "-o", dir + "/e.json"]).status, 66)
        XCTAssertEqual(run(["compare", "--db", url, "--base-build", "nb1", "--head-build", "nb2"]).status, 66)
        _ = run(["query", "--db", url, "SELECT count(*) AS n FROM sessions"])
        _ = run(["query", "--db", url, "SELECT * FROM no_such_table"])
        _ = run(["analyze", "--db", url])
        _ = run(["schema", "--db", url])
        // A database that is not there: the error names it without the password.
        let missing = url.replacingOccurrences(of: "options=-csearch_path%3D", with: "options=-csearch_path%3Dnone_")
        XCTAssertNotEqual(run(["report", "--db", missing]).status, 0)
        let unreachable = "postgresql://qa:\(Self.secret)@127.0.0.1:1/none?connect_timeout=2&password=\(Self.secret)"
        XCTAssertEqual(run(["report", "--db", unreachable]).status, 74)

        for (what, text) in outputs {
            XCTAssertFalse(text.contains(Self.secret), "\(what) holds the password: \(text)")
        }
        // A follow-up command of the text report, pasted as printed, runs.
        let line = try XCTUnwrap(report.out.split(separator: "\n").first { $0.contains("lctrace query --db") })
        // From `lctrace query` to the SQL's closing quote (a parenthesis may follow).
        let command = String(line[line.range(of: "lctrace query")!.lowerBound...line.lastIndex(of: "\"")!])
        let pasted = try TestSupport.process("/bin/sh", ["-c", command.replacingOccurrences(of: "lctrace ", with: "'\(TestSupport.binary)' ")])
        XCTAssertEqual(pasted.status, 0, "\(command): \(pasted.err)")
    }
}
