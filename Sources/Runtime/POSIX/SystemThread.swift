import Glibc

/// A plain pthread of its own, for a loop that blocks in the kernel (`poll`, `sigwait`), never on
/// Swift's cooperative pool. Unlike Foundation's `Thread` it can really be joined.
package struct SystemThread: Sendable {
    private let thread: pthread_t

    /// Starts `body` on a new thread, which keeps what `body` captures until it returns.
    package static func start(_ body: sending @escaping () -> Void) throws(SystemCallError) -> SystemThread {
        let retained = Unmanaged.passRetained(Body(body))
        var thread = pthread_t()
        let created = pthread_create(
            &thread, nil,
            { argument in
                Unmanaged<Body>.fromOpaque(argument!).takeRetainedValue().run()
                return nil
            }, retained.toOpaque())
        guard created == 0 else {
            retained.release()
            throw SystemCallError(call: "pthread_create", errno: created)
        }
        return SystemThread(thread: thread)
    }

    /// Whether the caller is running on this thread.
    package var isCurrent: Bool { pthread_equal(pthread_self(), thread) != 0 }

    /// Waits for the thread to finish. Call it once, and never together with `detach()`.
    package func join() {
        pthread_join(thread, nil)
    }

    /// Sends `signal` to this thread alone (`pthread_kill`).
    package func send(_ signal: Int32) {
        pthread_kill(thread, signal)
    }

    /// Lets the thread's resources go when it finishes, without anyone joining it.
    package func detach() {
        pthread_detach(thread)
    }

    /// The closure handed to the new thread, which alone runs it.
    private final class Body: @unchecked Sendable {
        // @unchecked: created by `start` and from then on used only by the thread it starts.
        let run: () -> Void

        init(_ run: sending @escaping () -> Void) { self.run = run }
    }
}
