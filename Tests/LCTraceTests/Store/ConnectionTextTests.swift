import XCTest
@testable import LCTraceStore
@testable import LCTraceSQLite
@testable import LCTrace

/// `--db` values meant for a server are never taken for a file path, and their passwords
/// never reach an output or a file name (found by a hostile-input round: a libpq connection
/// string became a file named after its password).
final class ConnectionTextTests: TemporaryDirectoryTestCase {
    static let secret = "Hunter2-SECRET"

    func testValuesMeantForAServerAreNotPaths() {
        let s = Self.secret
        for text in ["host=127.0.0.1 user=qa password=\(s) dbname=lc", " HOST = h port=5",
                     "host=h password='a b \(s)' user=u", "mydir/password = \(s)", "x?password%3D\(s)",
                     " postgresql://qa:\(s)@h/lc", "postgresql:/qa:\(s)@h/lc", "Postgres:/qa", "pg://qa:\(s)@h/lc",
                     "mysql://qa@h/lc", "qa:\(s)@db.example.com", "qa:\(s)@db.example.com/lc", "postgresql:qa:\(s)@h/lc",
                     "//qa:\(s)@h/lc", "host=h oauth_client_secret=\(s)", "host=h port=5"] {
            XCTAssertNotNil(ConnectionText.notAPath(text), text)
        }
        for path in ["lctrace.db", "/tmp/a b/c.db", "weird name=1.db", "./hosts=x.db", "postgresql.db", "data/pg:1.db",
                     "postgres:copy.db", "host=web1/lctrace.db", "dbname=x", "me@home/lctrace.db", "a@b:c.db"] {
            XCTAssertNil(ConnectionText.notAPath(path), path)
        }
    }

    func testRedactedTextHoldsNoPassword() {
        let s = Self.secret
        let cases: [(String, String)] = [
            ("host=127.0.0.1 user=qa password=\(s) dbname=lc", "host=127.0.0.1 user=qa password=*** dbname=lc"),
            ("host=h password = 'a b \(s)' user=u", "host=h password = *** user=u"),
            (#"host=h sslpassword='q\' \#(s)' dbname=x"#, "host=h sslpassword=*** dbname=x"),
            (" postgresql://qa:\(s)@h/lc", " postgresql://qa@h/lc"),
            ("postgresql:/qa:\(s)@h/lc", "postgresql:/qa@h/lc"),
            ("pg://qa@h/lc?sslmode=require&pass%77ord=\(s)&PASSWORD=\(s)", "pg://qa@h/lc?sslmode=require&pass%77ord=***&PASSWORD=***"),
            ("mydir/password%3D\(s)", "mydir/password%3D***"),
            // A connection string's value ends at unescaped white space only.
            ("password=ab&\(s) host=h", "password=*** host=h"),
            (#"host=h password=se\ \#(s) dbname=x"#, "host=h password=*** dbname=x"),
            ("host=h oauth_client_secret=\(s) scram_client_key=\(s)", "host=h oauth_client_secret=*** scram_client_key=***"),
            // Credentials without a scheme or its slashes, to the last '@' of their part.
            ("qa:\(s)@db.example.com/lc", "qa@db.example.com/lc"),
            ("postgresql:qa:\(s)@h/lc", "postgresql@h/lc"),
            ("postgresql://qa:p@\(s)@h/lc", "postgresql://qa@h/lc"),
            ("postgresql://qa@h/lc?oauth_client_secret=\(s)", "postgresql://qa@h/lc?oauth_client_secret=***"),
            ("lctrace.db", "lctrace.db"),
        ]
        for (text, expected) in cases {
            XCTAssertEqual(ConnectionText.redacted(text), expected, text)
            XCTAssertFalse(ConnectionText.redacted(text).contains(s), text)
        }
    }

    /// Refused by what it is, exit 74, no file made, the password nowhere in the output.
    func testAConnectionStringIsRefusedAndMakesNoFile() throws {
        let trace = dir + "/t.jsonl"
        TestSupport.writeLines(["{\"v\":1,\"sid\":\"S\",\"seq\":0,\"t\":0,\"ev\":\"session\",\"wall\":\"2026-11-02T10:15:03.120Z\"}"], to: trace)
        for db in ["host=127.0.0.1 user=qa password=\(Self.secret) dbname=lc", " postgresql://qa:\(Self.secret)@h/lc",
                   "postgresql:/qa:\(Self.secret)@h/lc"] {
            for args in [["ingest", "--db", db, trace], ["report", "--db", db], ["query", "--db", db, "SELECT 1"]] {
                let r = TestSupport.run(args, workingDirectory: dir)
                XCTAssertEqual(r.status, 74, "\(args): \(r.err)")
                XCTAssertTrue(r.err.contains("lctrace does not take") || r.err.contains("a URL lctrace cannot use"), r.err)
                XCTAssertFalse(r.out.contains(Self.secret) || r.err.contains(Self.secret), "\(args): \(r.err)")
            }
        }
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: dir).sorted(), ["t.jsonl"])
    }

    /// A database given where trace files go is refused as one, with where it goes, and never
    /// shown with its password as a missing file.
    func testADatabaseGivenAsATraceFileIsRefused() {
        for given in ["postgresql://qa:\(Self.secret)@h/lc", "host=h password=\(Self.secret)", "qa:\(Self.secret)@h/lc"] {
            let r = TestSupport.run(["ingest", "--db", dir + "/x.db", given, dir], workingDirectory: dir)
            XCTAssertEqual(r.status, 64, r.err)
            XCTAssertTrue(r.err.contains("is a database, not a trace file") && r.err.contains("Hint: a database goes after --db"), r.err)
            XCTAssertFalse(r.err.contains(Self.secret), r.err)
        }
        XCTAssertFalse(FileManager.default.fileExists(atPath: dir + "/x.db"))
    }
}
