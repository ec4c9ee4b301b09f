import Glibc
import Synchronization

/// Turns process signals (SIGTERM, SIGINT, SIGHUP) into callbacks on an `EventLoop`.
///
/// Signals are taken with `sigwait` on a thread of the watcher's own, never with a signal handler
/// or a Dispatch signal source: on Linux a Dispatch source reads a signalfd, and a thread that does
/// not block the signal can take it first, so the source never fires and a SIGTERM is lost (seen:
/// about 4 in 900). The daemon MUST call `block(_:)` first thing in `main`, before any other thread
/// exists, so every thread inherits the mask and only the watcher's `sigwait` ever sees them.
package final class SignalWatcher: Sendable {
    package let signals: [Int32]
    /// `SIGHUP`, which daemons take as "reload" and ours log and ignore.
    package static let hangUp = SIGHUP

    /// The thread waiting in `sigwait` (for tests: a thread-directed signal reaches it directly).
    package let thread: SystemThread
    private let cancelled = CancelFlag()

    /// Blocks `signals` in the calling thread and, through inheritance, in every thread it creates later.
    package static func block(_ signals: [Int32] = [SIGTERM, SIGINT, SIGHUP]) {
        var set = Self.set(of: signals)
        pthread_sigmask(SIG_BLOCK, &set, nil)
    }

    /// Starts waiting for `signals`; each one runs `handler` on `loop`. Blocks them in the calling
    /// thread too (a no-op after `block(_:)`).
    package init(
        signals: [Int32] = [SIGTERM, SIGINT, SIGHUP], loop: EventLoop,
        handler: @escaping @Sendable (Int32) -> Void
    ) {
        self.signals = signals
        Self.block(signals)
        let cancelled = self.cancelled
        let waiter = Waiter(set: Self.set(of: signals)) { signal in
            guard !cancelled.value.load(ordering: .acquiring) else { return }
            loop.execute { handler(signal) }
        }
        do {
            thread = try SystemThread.start { waiter.run() }
            thread.detach()
        } catch {
            // Sound: pthread_create fails only when the process is out of threads or memory at start-up,
            // before the daemon serves anything; without a signal thread it could never stop cleanly.
            preconditionFailure("pthread_create for the signal watcher failed: errno \(error.errno)")
        }
    }

    /// Stops delivering: later signals stay blocked, so they are ignored rather than fatal (a second
    /// SIGTERM during a graceful stop does not kill the process half-way).
    package func cancel() {
        cancelled.value.store(true, ordering: .releasing)
    }

    /// Parks the calling thread (a daemon's main thread, with nothing left to do) for good, keeping
    /// the watcher alive; signals reach the watcher's thread meanwhile.
    package func waitForever() -> Never {
        while true {
            withExtendedLifetime(self) { _ = pause() }
        }
    }

    /// `SIGTERM`, `SIGINT`, … for logs.
    package static func name(of signal: Int32) -> String {
        switch signal {
        case SIGTERM: return "SIGTERM"
        case SIGINT: return "SIGINT"
        case SIGHUP: return "SIGHUP"
        case SIGUSR1: return "SIGUSR1"
        case SIGUSR2: return "SIGUSR2"
        default: return "signal \(signal)"
        }
    }

    private static func set(of signals: [Int32]) -> sigset_t {
        var set = sigset_t()
        sigemptyset(&set)
        for signal in signals { sigaddset(&set, signal) }
        return set
    }

    /// Shared between the watcher and its thread (an Atomic: read on every signal, set once).
    private final class CancelFlag: Sendable {
        let value = Atomic(false)
    }

    /// The body of the watcher's thread: wait, deliver, repeat, for the life of the process.
    private final class Waiter: @unchecked Sendable {
        // @unchecked: used only by the thread it is handed to.
        var set: sigset_t
        let deliver: @Sendable (Int32) -> Void

        init(set: sigset_t, deliver: @escaping @Sendable (Int32) -> Void) {
            self.set = set
            self.deliver = deliver
        }

        func run() {
            var signal: Int32 = 0
            while true {
                guard sigwait(&set, &signal) == 0 else { continue }
                deliver(signal)
            }
        }
    }
}
