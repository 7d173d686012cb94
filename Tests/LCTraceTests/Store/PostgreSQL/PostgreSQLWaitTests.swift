import XCTest
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
@testable import LCTraceStore
@testable import LCTracePostgreSQL
@testable import LCTrace

/// A TCP listener on loopback that accepts connections and never answers: a PostgreSQL
/// server that hangs.
final class SilentServer: @unchecked Sendable {
    private let listener: Int32
    let port: UInt16
    private let lock = NSLock()
    private var accepted: [Int32] = []

    init() throws {
        #if canImport(Glibc)
        let listening = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #else
        let listening = socket(AF_INET, SOCK_STREAM, 0)
        #endif
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(listening, $0, length) } }
        guard bound == 0, listen(listening, 16) == 0 else { throw POSIXError(.EADDRINUSE) }
        _ = withUnsafeMutablePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(listening, $0, &length) } }
        port = UInt16(bigEndian: address.sin_port)
        listener = listening
        Thread.detachNewThread { [weak self] in
            while true {
                let fd = accept(listening, nil, nil)
                guard fd >= 0 else { return }
                guard let self else { close(fd); return }
                self.lock.lock(); self.accepted.append(fd); self.lock.unlock()
            }
        }
    }

    /// Connections accepted so far.
    var connections: Int { lock.lock(); defer { lock.unlock() }; return accepted.count }

    deinit {
        shutdown(listener, Int32(SHUT_RDWR))
        close(listener)
        lock.lock(); accepted.forEach { close($0) }; lock.unlock()
    }
}

/// SIGINT to a running `lctrace`.
enum Interrupting {
    /// Starts `lctrace args`, sends SIGINT once `ready` holds, and returns its exit status,
    /// stderr and the seconds from the signal to its end.
    static func run(_ args: [String], once ready: () -> Bool,
                    file: StaticString = #filePath, line: UInt = #line) throws -> (status: Int32, err: String, seconds: Double) {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: TestSupport.binary)
        p.arguments = args
        let err = Pipe()
        p.standardOutput = FileHandle.nullDevice
        p.standardError = err
        try p.run()
        let deadline = Date().addingTimeInterval(20)
        while !ready() && Date() < deadline { usleep(10_000) }
        usleep(300_000)  // past the signal set-up, which comes before connecting
        XCTAssertTrue(p.isRunning, "still waiting when interrupted", file: file, line: line)
        let sent = Date()
        kill(p.processIdentifier, SIGINT)
        let watchdog = DispatchWorkItem { kill(p.processIdentifier, SIGKILL) }
        DispatchQueue.global().asyncAfter(deadline: .now() + 30, execute: watchdog)
        let text = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        p.waitUntilExit()
        watchdog.cancel()
        let status = p.terminationReason == .uncaughtSignal ? 128 + p.terminationStatus : p.terminationStatus
        return (status, text, Date().timeIntervalSince(sent))
    }
}

/// No wait on a PostgreSQL server is endless or deaf to Ctrl-C: connecting has a default
/// timeout (the URL's `connect_timeout` overrides it), and SIGINT ends an ingest that waits
/// for a connection or for a result.
final class PostgreSQLWaitTests: XCTestCase {
    static let secret = "Hunter2-SECRET"

    /// A server that accepts and never answers: the command fails within the URL's
    /// connect_timeout, saying so, without the password.
    func testAServerThatNeverAnswersFailsWithinTheConnectTimeout() throws {
        let server = try SilentServer()
        let url = "postgresql://qa:\(Self.secret)@127.0.0.1:\(server.port)/none?connect_timeout=1&sslmode=disable"
        for args in [["report", "--db", url], ["ingest", "--db", url, "-"], ["query", "--db", url, "SELECT 1"]] {
            let started = Date()
            let r = TestSupport.run(args)
            let seconds = Date().timeIntervalSince(started)
            XCTAssertEqual(r.status, 74, "\(args[0]): \(r.err)")
            XCTAssertTrue(r.err.contains("no answer within 1 s") && r.err.contains("connect_timeout"), "\(args[0]): \(r.err)")
            XCTAssertFalse(r.err.contains(Self.secret), r.err)
            XCTAssertLessThan(seconds, 4, "\(args[0]) waited past connect_timeout=1")
        }
        XCTAssertGreaterThan(server.connections, 0, "the commands reached the silent server")
    }

    /// Without connect_timeout in the URL, a silent server is given 10 s.
    func testTheDefaultConnectTimeoutIsTenSeconds() throws {
        let server = try SilentServer()
        let started = Date()
        let r = TestSupport.run(["sessions", "--db", "postgresql://qa@127.0.0.1:\(server.port)/none?sslmode=disable"])
        let seconds = Date().timeIntervalSince(started)
        XCTAssertEqual(r.status, 74, r.err)
        XCTAssertTrue(r.err.contains("no answer within 10 s"), r.err)
        XCTAssertGreaterThan(seconds, 9)
        XCTAssertLessThan(seconds, 14)
    }

    /// Ctrl-C while `ingest` connects to a silent server (with a long connect_timeout) ends it at once.
    func testSIGINTEndsAnIngestWhileItConnects() throws {
        let server = try SilentServer()
        let url = "postgresql://qa:\(Self.secret)@127.0.0.1:\(server.port)/none?connect_timeout=60&sslmode=disable"
        let samples = TestSupport.root.appendingPathComponent("SampleTraces").path
        let r = try Interrupting.run(["ingest", "--db", url, samples], once: { server.connections > 0 })
        XCTAssertEqual(r.status, 130, r.err)
        XCTAssertLessThan(r.seconds, 3, "ingest went on waiting after SIGINT")
        XCTAssertTrue(r.err.hasPrefix("interrupted: "), r.err)
        XCTAssertFalse(r.err.contains(Self.secret), r.err)
    }
}

/// SIGINT while an ingest waits for the server's answer (a table another session locked).
final class PostgreSQLInterruptTests: PostgreSQLTestCase {
    func testSIGINTEndsAnIngestWhileItWaitsForALock() throws {
        let url = try freshDatabase()
        let samples = TestSupport.root.appendingPathComponent("SampleTraces").path
        XCTAssertEqual(TestSupport.run(["ingest", "-q", "--db", url, samples]).status, 0)
        let schema = try XCTUnwrap(schemas.last)
        let locker = try PGConnection(url: url)
        // The server ends the locker after 15 s idle: a deaf ingest fails on its duration, not by hanging.
        try locker.execute("SET idle_in_transaction_session_timeout = '15s'; BEGIN; LOCK TABLE meta IN ACCESS EXCLUSIVE MODE")
        let waiting = {
            (try? self.admin.query("""
                SELECT count(*) FROM pg_locks l JOIN pg_class c ON c.oid = l.relation JOIN pg_namespace n ON n.oid = c.relnamespace
                WHERE NOT l.granted AND c.relname = 'meta' AND n.nspname = $1
                """, [schema]).int(0, 0)) ?? 0 > 0
        }
        let r = try Interrupting.run(["ingest", "--db", url, samples], once: waiting)
        try? locker.execute("ROLLBACK")
        XCTAssertEqual(r.status, 130, r.err)
        XCTAssertLessThan(r.seconds, 3, "ingest went on waiting for the lock after SIGINT")
        XCTAssertTrue(r.err.hasPrefix("interrupted: "), r.err)
        // Its cancelled wait let go: the lock is free and the database reads.
        XCTAssertEqual(TestSupport.run(["sessions", "--db", url]).status, 0)
    }

    /// SIGINT while files load: a clean end (exit 130, the files loaded told), and the same
    /// command finishes to the content of an uninterrupted load.
    func testSIGINTWhileLoadingEndsCleanlyAndTheSameCommandFinishes() throws {
        let input = try corpus("c", seed: 11, sessions: 30)
        let url = try freshDatabase()
        let reference = try freshDatabase("reference")
        XCTAssertEqual(TestSupport.run(["ingest", "-q", "--db", reference, input]).status, 65)
        let schema = try XCTUnwrap(url.components(separatedBy: "search_path%3D").last)
        let loading = {
            ((try? self.admin.query("SELECT count(*) FROM \(schema).files WHERE status = 'loading'").int(0, 0)) ?? 0) ?? 0 > 0
        }
        let r = try Interrupting.run(["ingest", "-q", "--db", url, input], once: loading)
        XCTAssertEqual(r.status, 130, r.err)
        XCTAssertLessThan(r.seconds, 3)
        let last = r.err.split(separator: "\n").last.map(String.init) ?? ""
        XCTAssertTrue(last.hasPrefix("interrupted: ") && last.hasSuffix("run the same command again to finish"), r.err)
        XCTAssertEqual(TestSupport.run(["ingest", "-q", "--db", url, input]).status, 65)
        XCTAssertEqual(try TestSupport.logicalDump(location: url), try TestSupport.logicalDump(location: reference))
    }
}
