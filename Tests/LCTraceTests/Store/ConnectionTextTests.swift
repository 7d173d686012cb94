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
                     "host=h password='a b \(s)' user=u", "x?password%3D\(s)",
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

    /// No fragment of the secret (4 characters or more) in `text`.
    private func assertNoSecret(_ text: String, _ context: String, file: StaticString = #filePath, line: UInt = #line) {
        let s = Self.secret
        for start in 0...(s.count - 4) {
            let piece = String(s.dropFirst(start).prefix(4))
            XCTAssertFalse(text.contains(piece), "\(context) → \(text)", file: file, line: line)
        }
    }

    /// Every value a user may type, well or badly: shown without a fragment of the secret,
    /// and a well-formed URL shown exactly as before (it is pasted into follow-up commands).
    func testShownLocationsHoldNoSecret() {
        let s = Self.secret
        let exact: [(String, String)] = [
            ("postgresql://qa:\(s)@db.example:5432/lc", "postgresql://qa@db.example:5432/lc"),
            ("postgresql://:\(s)@db.example/lc", "postgresql://db.example/lc"),
            ("postgresql://qa@db.example/lc?sslmode=require&password=\(s)&connect_timeout=3",
             "postgresql://qa@db.example/lc?sslmode=require&connect_timeout=3"),
            ("postgresql://qa@h/lc?pass%77ord=\(s)&oauth_client_secret=\(s)&p%61ssword%zz=\(s)", "postgresql://qa@h/lc"),
            ("postgresql://qa@h/lc?options=-csearch_path%3Dx", "postgresql://qa@h/lc?options=-csearch_path%3Dx"),
            ("postgresql://qa@h/lc?options=-csearch_path%3Dno_password_here", "postgresql://qa@h/lc?options=-csearch_path%3Dno_password_here"),
            ("postgresql://qa@h/lc?options=-csearch_path%3Dx%20-cx.password%3D\(s)", "postgresql://qa@h/lc?options=***"),
            ("postgresql://qa@h/lc?dbname=postgresql://qa:\(s)@h2", "postgresql://qa@h/lc?dbname=***"),
            // A '/', '@', '?' or space left unencoded in the password.
            ("postgresql://qa:ab/\(s)@h:5432/lc", "postgresql://qa@h:5432/lc"),
            ("postgresql://qa:ab@\(s)@h:5432/lc", "postgresql://qa@h:5432/lc"),
            ("postgresql://qa:ab?\(s)@h:5432/lc", "postgresql://qa@h:5432/lc"),
            ("postgresql://qa:ab \(s)@h:5432/lc", "postgresql://qa@h:5432/lc"),
            // A secret after a wrong separator.
            ("postgresql://qa@h/lc&password=\(s)", "postgresql://qa@h/lc&password=***"),
            ("postgresql://qa@h/lc password=\(s)", "postgresql://qa@h/lc password=***"),
            ("host=h password = 'a b \(s)' user=u", "host=h password = *** user=u"),
            (#"host=h password=se\ \#(s) dbname=x"#, "host=h password=*** dbname=x"),
            ("lctrace.db", "lctrace.db"),
        ]
        for (text, expected) in exact {
            XCTAssertEqual(ConnectionText.shownLocation(text), expected, text)
        }
        let messy = ["lctrace:\(s) x@127.0.0.1", "Server=h;Uid=u;Pwd=\(s)", "password:\(s)", "host=h sslrootcert=C:/r.crt password=\(s)",
                     "host=h password=ab:x@\(s)", "user=a:b@c password=\(s)", "foo scram_client_key=\(s)", " postgresql://qa:ab?\(s)@h/lc",
                     "postgresql:/qa:ab?\(s)@h/lc", "POSTGRESQL:/u:ab/\(s)@h", "qa:ab?\(s)@db.example.com", "postgresql:/u@h/db&password=\(s)",
                     "postgresql://qa@h/lc?password%3D\(s)", "postgresql://qa@h/lc?password:\(s)"]
        for text in messy {
            assertNoSecret(ConnectionText.shownLocation(text), text)
            XCTAssertNotNil(ConnectionText.notAPath(text), text)
        }
        // What libpq and the server quote back is scrubbed of every secret the value holds.
        let url = "postgresql://qa:ab/\(s)@h/lc&password=\(s)x"
        assertNoSecret(ConnectionText.scrubbed(#"invalid integer value "ab/\#(s)" for "port"; database "lc&password=\#(s)x""#, of: url), url)
        // The net of every error line: URLs, credentials and secret keys anywhere in it.
        for line in ["unknown command 'postgresql://qa:\(s)@h/lc'", "unknown option '-d=host=h password=\(s)'"] {
            assertNoSecret(ConnectionText.scrubbedLine(line), line)
        }
        XCTAssertEqual(ConnectionText.scrubbedLine("unknown command 'postgresql://qa:\(s)@h/lc'"), "unknown command 'postgresql://qa@h/lc'")
        XCTAssertEqual(ConnectionText.scrubbedLine("key 'password': expected a string"), "key 'password': expected a string")
        // File names, sessions and classes are shown as given (a review of false positives).
        for line in ["baseline base 10:30@ci.json: no such file", "no class 'Login:password:' in any session",
                     "no session matches --session '2024-05-01T10:30@alice'"] {
            XCTAssertEqual(ConnectionText.scrubbedLine(line), line)
        }
        // A path is a path, however odd; a file path's secret key is shown masked to the end of its part.
        for path in ["runs/10:30@ci/lctrace.db", "backup 10:30/me@example.com/x.db", "/tmp/password=old/x.db",
                     "traces/password=reset.jsonl", "/tmp/secret_level=2/x.db", "/tmp/pwd:x/x.db"] {
            XCTAssertNil(ConnectionText.notAPath(path), path)
        }
        XCTAssertEqual(ConnectionText.shownPath("keys/password=\(s)/x.db"), "keys/password=***/x.db")
        // A port's ':' before a database named with '@' is no password (libpq reads it so too).
        XCTAssertEqual(ConnectionText.shownLocation("postgresql://qa@h:5432/team@mobile"), "postgresql://qa@h:5432/team@mobile")
        XCTAssertEqual(ConnectionText.shownLocation("postgresql://h:5432/team@mobile"), "postgresql://h:5432/team@mobile")
        // A setting whose name holds 'password' is no secret: options kept for the follow-up command.
        let options = "postgresql://qa@h/lc?options=-c%20search_path%3Dx%20-c%20password_encryption%3Dscram-sha-256"
        XCTAssertEqual(ConnectionText.shownLocation(options), options)
        // A password equal to the user or database hides nothing: the server's words stay whole.
        XCTAssertEqual(ConnectionText.scrubbed(#"role "postgres" does not exist"#, of: "postgresql://postgres:postgres@h/postgres"),
                       #"role "postgres" does not exist"#)
        XCTAssertEqual(ConnectionText.shownLocation("postgresql://qa@secret-db:5432/lc"), "postgresql://qa@secret-db:5432/lc")
    }

    /// Refused by what it is, exit 74, no file made, the password nowhere in the output.
    func testAConnectionStringIsRefusedAndMakesNoFile() throws {
        let trace = dir + "/t.jsonl"
        TestSupport.writeLines(["{\"v\":1,\"sid\":\"S\",\"seq\":0,\"t\":0,\"ev\":\"session\",\"wall\":\"2026-11-02T10:15:03.120Z\"}"], to: trace)
        for db in ["host=127.0.0.1 user=qa password=\(Self.secret) dbname=lc", " postgresql://qa:\(Self.secret)@h/lc",
                   "postgresql:/qa:\(Self.secret)@h/lc"] {
            for args in [["ingest", "--db", db, trace], ["report", "--db", db], ["query", "--db", db, "SELECT 1"]] {
                let r = TestSupport.run(args, workingDirectory: dir)
                XCTAssertEqual(r.status, 64, "\(args): \(r.err)")
                XCTAssertTrue(r.err.contains("lctrace does not take") || r.err.contains("a URL lctrace cannot use"), r.err)
                XCTAssertFalse(r.out.contains(Self.secret) || r.err.contains(Self.secret), "\(args): \(r.err)")
            }
        }
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: dir).sorted(), ["t.jsonl"])
    }

    /// A URL typed where another value goes (a command, a format, an output file, a session)
    /// is echoed by messages that know nothing of databases: never with its secret.
    func testAURLInAnotherSlotIsEchoedWithoutItsSecret() {
        let url = "postgresql://qa:\(Self.secret)@h/lc"
        for args in [[url], ["help", url], ["report", "--format", url], ["report", "--output", "/nonexistent/" + url],
                     ["report", "--color", url], ["timeline", "--session", url], ["report", "-d=" + url],
                     ["report", "--db", "host=h password=\(Self.secret) port=5"], ["sessions", "qa:ab \(Self.secret)@h"]] {
            let r = TestSupport.run(args, workingDirectory: dir)
            XCTAssertNotEqual(r.status, 0, "\(args)")
            assertNoSecret(r.out + r.err, "\(args)")
        }
    }

    /// A database given where trace files go is refused as one, with where it goes, and never
    /// shown with its password as a missing file.
    func testADatabaseGivenAsATraceFileIsRefused() {
        for given in ["postgresql://qa:\(Self.secret)@h/lc", "host=h password=\(Self.secret)", "qa:\(Self.secret)@h/lc"] {
            let r = TestSupport.run(["ingest", "--db", dir + "/x.db", given, dir], workingDirectory: dir)
            XCTAssertEqual(r.status, 64, r.err)
            XCTAssertTrue(r.err.contains("an argument is a database") && r.err.contains("Hint: a database goes after --db"), r.err)
            XCTAssertFalse(r.err.contains(Self.secret), r.err)
        }
        XCTAssertFalse(FileManager.default.fileExists(atPath: dir + "/x.db"))
    }
}
