import Dispatch
import Glibc
import LinkRuntime
import Synchronization

/// Turns POSIX signals (SIGTERM, SIGINT, SIGHUP by default) into callbacks on an `EventLoop`.
///
/// Each signal's disposition is first set to `SIG_IGN`, so the default action (terminating the
/// process) never runs, then a Dispatch signal source — which still reports an ignored signal, as
/// swift-service-lifecycle relies on too — forwards each delivery onto the loop with `execute`.
/// The handler therefore runs on the loop thread, in the daemon's normal event order, and may
/// touch loop-confined state. Signals that arrive close together may be coalesced into one call.
///
/// `cancel()` stops delivery but leaves the signals ignored: restoring `SIG_DFL` while shutting
/// down would let a second SIGTERM kill the process in the middle of a graceful stop.
package final class SignalWatcher: Sendable {
    /// The signals watched.
    package let signals: [Int32]
    /// A Mutex because `cancel()` may be called from any thread, racing the deinit of another owner.
    private let sources: Mutex<[any DispatchSourceSignal]>

    /// Starts watching `signals`, calling `handler` with the signal number on `loop`.
    package init(
        signals: [Int32] = [SIGTERM, SIGINT, SIGHUP], loop: EventLoop,
        handler: @escaping @Sendable (Int32) -> Void
    ) {
        self.signals = signals
        let queue = DispatchQueue(label: "signal-watcher")
        var created: [any DispatchSourceSignal] = []
        for number in signals {
            _ = signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: queue)
            source.setEventHandler { loop.execute { handler(number) } }
            source.resume()
            created.append(source)
        }
        sources = Mutex(created)
    }

    /// Stops forwarding signals. Idempotent; callable from any thread.
    package func cancel() {
        let cancelled = sources.withLock { sources in
            defer { sources = [] }
            return sources
        }
        for source in cancelled { source.cancel() }
    }

    deinit {
        cancel()
    }

    /// `SIGTERM`, `SIGINT` or `SIGHUP` by name, or `signal N`, for log lines.
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
}
