import Dispatch
import LCTrace
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import LCTraceModel

/// Turns SIGINT and SIGTERM into a `StopRequest` while a long command runs, so it can end
/// cleanly: the batch in flight rolled back, locks let go, the write-ahead log copied back, a
/// one-line message, exit 130 or 143. The signals are received on a dispatch queue (no code
/// runs inside a signal handler); a second one ends the process at once, as usual (the
/// database is consistent whenever a process dies).
final class SignalWatch {
    private var sources: [DispatchSourceSignal] = []
    let stop = StopRequest()

    init() {
        for signo in [SIGINT, SIGTERM] {
            signal(signo, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: signo, queue: .global())
            source.setEventHandler { [stop] in
                signal(signo, SIG_DFL)
                stop.request(signal: signo)
            }
            source.resume()
            sources.append(source)
        }
    }

    /// Gives the signals their usual meaning back.
    func end() {
        for source in sources { source.cancel() }
        sources = []
        signal(SIGINT, SIG_DFL)
        signal(SIGTERM, SIG_DFL)
    }

    deinit { end() }

    /// The end of a command stopped while it opened its database (connecting to a server,
    /// waiting for a lock): nothing was done yet.
    func interruptedWhileOpening(_ console: Console) -> Int32 {
        console.writeError("interrupted: while opening the database, before any change; run the same command again\n")
        return Self.exitStatus(stop.signal)
    }

    /// The exit status of a process ended by `signal`: 128 + its number (130 for SIGINT).
    static func exitStatus(_ signal: Int32) -> Int32 { ExitStatus.interrupted(by: signal == 0 ? SIGINT : signal) }
}
