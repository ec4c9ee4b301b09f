import Glibc

/// How a child process ended.
package enum Termination: Equatable, Sendable, CustomStringConvertible {
    /// It exited with this code.
    case exited(Int32)
    /// This signal killed it.
    case signalled(Int32)

    /// Decodes a status from `waitpid` (called without `WUNTRACED`, so never a stopped child).
    init(waitStatus status: Int32) {
        let signal = status & 0x7f
        self = signal == 0 ? .exited((status >> 8) & 0xff) : .signalled(signal)
    }

    /// The exit code, or the signal's number when a signal killed it (what Foundation's
    /// `Process.terminationStatus` reports, and what the test harness has always compared against).
    package var status: Int32 {
        switch self {
        case .exited(let code): code
        case .signalled(let signal): signal
        }
    }

    /// As a shell reports it: the exit code, or 128 + the signal's number.
    package var shellStatus: Int32 {
        switch self {
        case .exited(let code): code
        case .signalled(let signal): 128 + signal
        }
    }

    package var description: String {
        switch self {
        case .exited(let code): "exit \(code)"
        case .signalled(let signal): "signal \(signal)"
        }
    }
}

/// Why a program could not be started.
package struct SpawnError: Error, CustomStringConvertible {
    /// The program (argv[0]).
    package var program: String
    /// The call that failed: `posix_spawnp`, or `pipe2` for a captured stream.
    package var call: String
    /// The error number it returned or left in `errno`.
    package var code: Int32

    package var description: String { "cannot start \(program): \(call) failed: \(String(cString: strerror(code)))" }
}
