import Dispatch
import Glibc
import Synchronization

/// Identifies a timer armed with `EventLoop.scheduleTimer(after:_:)`, for `cancelTimer(_:)`.
package struct TimerID: Hashable, Sendable {
    let rawValue: Int
}

/// Something in the loop's poll set: a listener, a connection or a connect in progress.
///
/// Implementations are loop-confined; the loop calls every requirement on its own thread.
protocol LoopChannel: AnyObject {
    /// The file descriptor polled for this channel.
    var descriptor: Int32 { get }
    /// The `poll` events wanted right now; 0 leaves the descriptor out of this turn's poll set.
    var pollEvents: Int16 { get }
    /// Reacts to the `revents` poll reported for `descriptor`.
    func handle(events: Int16)
    /// Closes the channel because the loop is shutting down (reporting `loopShutDown` to its owner).
    func closeForShutdown()
}

/// A single-threaded, `poll(2)`-based event loop on its own dedicated thread, owning non-blocking
/// sockets and timers.
///
/// Threading contract: `execute(_:)`, `submit(_:)`, `shutdown()`, `inLoop` and `name` may be used
/// from any thread. **Everything else** — `listen`, `listenUnix`, `connect`, `scheduleTimer`,
/// `cancelTimer` and every `Connection`/`Listener` member except their immutable properties — must be
/// called on the loop's thread (they check with `preconditionInLoop()`), and every callback the
/// loop makes runs on that thread. A pure protocol engine can therefore be driven entirely from
/// loop callbacks without locks. Blocking system calls never run on Swift's cooperative pool.
///
/// Each turn of the loop: run internal deferred work, `poll` the wake-up eventfd and every channel
/// (timeout = the next timer's deadline on a monotonic clock), handle ready channels, fire due
/// timers in deadline order, then run closures queued by `execute`.
///
/// Call `shutdown()` when done: the thread keeps the loop alive until then.
package final class EventLoop: @unchecked Sendable {
    // @unchecked Sendable is sound because the only state touched off the loop thread is `shared`
    // (a Mutex), `loopThread` (an Atomic), `exited` (a semaphore), immutable lets and `thread`
    // (written once in init, read only after `shutdown()` has taken `shared`'s lock); every other
    // stored property is only read or written on the loop thread, which `preconditionInLoop()` enforces.

    /// The loop's name, used for its thread and in error messages.
    package let name: String

    /// The size of the buffer each read on a connection fills.
    package static let readBufferBytes = 64 * 1024

    /// State shared with other threads: queued work, whether the loop still accepts it, and who
    /// reaps the thread.
    private struct Shared {
        var acceptsWork = true
        var queue: [@Sendable () -> Void] = []
        /// A `shutdown()` caller off the loop thread has taken on `pthread_join`.
        var joinClaimed = false
        /// The thread finished before anyone claimed the join, so it detached itself.
        var threadDetached = false
    }

    private let shared = Mutex(Shared())
    /// The loop thread's `pthread_t` (0 until it starts), for `inLoop`.
    private let loopThread = Atomic<UInt>(0)
    /// Signalled once the loop thread has been joined (or has detached itself); `shutdown()` callers
    /// that did not join wait on it.
    private let exited = DispatchSemaphore(value: 0)
    /// The loop thread, for `join`; assigned once in `init`, before the loop is shared.
    private var thread: SystemThread?
    /// An eventfd other threads write to so that `poll` returns and the queue is run.
    private let wakeDescriptor: Int32

    private var channels: [Int32: any LoopChannel] = [:]
    private var timers: [ScheduledTimer] = []
    private var lastTimerID = 0
    private var deferred: [() -> Void] = []
    /// Set on the loop thread once shutdown has begun; loop-only APIs then refuse new work.
    private(set) var isShuttingDown = false
    /// The monotonic clock timers are measured on.
    let clock = ContinuousClock()
    /// Scratch space for reads; only the loop thread touches it.
    let readBuffer: UnsafeMutableRawBufferPointer

    private struct ScheduledTimer {
        let id: TimerID
        let deadline: ContinuousClock.Instant
        let work: () -> Void
    }

    /// Creates the loop and starts its thread, named `name`.
    package init(name: String) throws(SocketError) {
        self.name = name
        let descriptor = LinuxSystemCalls.eventfd(
            initialValue: 0, flags: LinuxSystemCalls.eventFDNonBlocking | LinuxSystemCalls.eventFDCloseOnExec)
        guard descriptor >= 0 else { throw .systemCall(call: "eventfd (event loop \(name))", errno: errno) }
        wakeDescriptor = descriptor
        readBuffer = .allocate(byteCount: Self.readBufferBytes, alignment: 16)
        // The thread holds a reference until it finishes, so the loop lives until shutdown().
        do {
            thread = try SystemThread.start { self.run() }
        } catch {
            // `deinit` closes the eventfd.
            throw .systemCall(call: "pthread_create (event loop \(name))", errno: error.errno)
        }
    }

    deinit {
        readBuffer.deallocate()
        _ = Glibc.close(wakeDescriptor)
    }

    /// Whether the caller is running on this loop's thread.
    package var inLoop: Bool {
        pthread_equal(pthread_self(), loopThread.load(ordering: .acquiring)) != 0
    }

    /// Traps with a message naming `function` unless called on the loop's thread.
    package func preconditionInLoop(
        _ function: StaticString = #function, file: StaticString = #fileID, line: UInt = #line
    ) {
        // A loop-only API called from another thread would race on loop-confined state; stop loudly.
        precondition(inLoop, "\(function) must be called on event loop \(name)'s thread", file: file, line: line)
    }

    /// Runs `work` on the loop thread during a later turn; callable from any thread, in order per caller.
    ///
    /// After `shutdown()` has begun the work is dropped (use `submit(_:)` to learn about that).
    package func execute(_ work: @escaping @Sendable () -> Void) {
        _ = enqueue(work)
    }

    /// Runs `work` on the loop thread and returns its result to the awaiting task.
    ///
    /// Throws `SocketError.loopShutDown` if the loop no longer accepts work, or what `work` throws.
    package func submit<Value: Sendable>(_ work: @escaping @Sendable () throws -> Value) async throws -> Value {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Value, any Error>) in
            let accepted = enqueue { continuation.resume(with: Result { try work() }) }
            if !accepted { continuation.resume(throwing: SocketError.loopShutDown(loop: name)) }
        }
    }

    /// Appends `work` to the queue and wakes the loop; false if the loop is shutting down.
    ///
    /// Only the first work of a batch wakes the loop (it takes the whole queue), and the eventfd is
    /// written after the lock is released: the loop, woken on another core, would otherwise spin on
    /// the lock while the wake-up's system call is still under way. The eventfd stays open until
    /// `deinit`, which cannot run while a caller is in here.
    private func enqueue(_ work: @escaping @Sendable () -> Void) -> Bool {
        let wakes = shared.withLock { shared -> Bool? in
            guard shared.acceptsWork else { return nil }
            shared.queue.append(work)
            return shared.queue.count == 1
        }
        guard let wakes else { return false }
        if wakes { wake() }
        return true
    }

    private func wake() {
        var one: UInt64 = 1
        _ = Glibc.write(wakeDescriptor, &one, MemoryLayout<UInt64>.size)
    }

    /// Runs `work` on the loop after at least `delay` (measured on a monotonic clock). Loop-only.
    ///
    /// Timers fire in deadline order, equal deadlines in the order they were scheduled. A timer
    /// scheduled during shutdown never fires.
    @discardableResult
    package func scheduleTimer(after delay: Duration, _ work: @escaping () -> Void) -> TimerID {
        preconditionInLoop()
        lastTimerID += 1
        let timer = ScheduledTimer(
            id: TimerID(rawValue: lastTimerID), deadline: clock.now.advanced(by: max(delay, .zero)), work: work)
        guard !isShuttingDown else { return timer.id }
        var low = 0
        var high = timers.count
        while low < high {
            let middle = (low + high) / 2
            if timers[middle].deadline <= timer.deadline { low = middle + 1 } else { high = middle }
        }
        timers.insert(timer, at: low)
        return timer.id
    }

    /// Makes sure the timer `id` does not fire; a timer that already fired or was cancelled is ignored. Loop-only.
    package func cancelTimer(_ id: TimerID) {
        preconditionInLoop()
        timers.removeAll { $0.id == id }
    }

    /// Closes every listener and connection (their owners see `loopShutDown`), drops pending timers,
    /// runs work queued before the call, and stops the thread. Idempotent; callable from any thread.
    ///
    /// From another thread it returns once the loop thread has exited. Called on the loop thread
    /// itself it cannot wait for its own exit, so it returns at once and the loop stops after the
    /// current turn.
    package func shutdown() {
        let onLoop = inLoop
        let joins = shared.withLock { shared -> Bool in
            if shared.acceptsWork {
                shared.acceptsWork = false
                wake()
            }
            guard !onLoop, !shared.joinClaimed, !shared.threadDetached else { return false }
            shared.joinClaimed = true
            return true
        }
        if onLoop { return }
        if joins {
            thread?.join()
        } else {
            exited.wait()
        }
        // Pass the signal on so every other caller of shutdown() returns too.
        exited.signal()
    }

    /// Adds `channel` to the poll set. Loop-only.
    func register(_ channel: any LoopChannel) {
        channels[channel.descriptor] = channel
    }

    /// Removes `channel` from the poll set; call before closing its descriptor. Loop-only.
    func deregister(_ channel: any LoopChannel) {
        if let current = channels[channel.descriptor], current === channel {
            channels[channel.descriptor] = nil
        }
    }

    /// Runs `work` at the start of the next turn, before polling: for completions and closes that
    /// must not re-enter the caller. Loop-only.
    func deferToNextTurn(_ work: @escaping () -> Void) {
        deferred.append(work)
    }

    /// The loop thread's body.
    private func run() {
        loopThread.store(pthread_self(), ordering: .releasing)
        LinuxSystemCalls.setThreadName(name)
        var pollSet: [pollfd] = []
        var polled: [any LoopChannel] = []
        while shared.withLock({ $0.acceptsWork }) {
            runDeferred()
            pollSet.removeAll(keepingCapacity: true)
            polled.removeAll(keepingCapacity: true)
            pollSet.append(pollfd(fd: wakeDescriptor, events: Int16(POLLIN), revents: 0))
            for channel in channels.values {
                let events = channel.pollEvents
                guard events != 0 else { continue }
                pollSet.append(pollfd(fd: channel.descriptor, events: events, revents: 0))
                polled.append(channel)
            }
            let ready = poll(&pollSet, nfds_t(pollSet.count), pollTimeoutMilliseconds())
            if ready < 0 {
                let error = errno
                // Only EINTR/ENOMEM are possible with arguments we built ourselves; both are transient.
                precondition(
                    error == EINTR || error == ENOMEM,
                    "poll failed on event loop \(name): \(Errno.describe(error))")
                continue
            }
            if pollSet[0].revents != 0 { drainWakeDescriptor() }
            for index in polled.indices where pollSet[index + 1].revents != 0 {
                let channel = polled[index]
                // A handler earlier in this turn may have closed it, and its number may be reused since.
                guard let current = channels[pollSet[index + 1].fd], current === channel else { continue }
                channel.handle(events: pollSet[index + 1].revents)
            }
            fireDueTimers()
            runQueued()
        }
        finishShutdown()
    }

    private func pollTimeoutMilliseconds() -> Int32 {
        if !deferred.isEmpty { return 0 }
        guard let next = timers.first else { return -1 }
        let remaining = clock.now.duration(to: next.deadline)
        guard remaining > .zero else { return 0 }
        let (seconds, attoseconds) = remaining.components
        // Round up so a timer is never woken early, which would spin until its deadline.
        let milliseconds = seconds * 1000 + (attoseconds + 999_999_999_999_999) / 1_000_000_000_000_000
        return Int32(clamping: milliseconds)
    }

    private func drainWakeDescriptor() {
        var count: UInt64 = 0
        _ = Glibc.read(wakeDescriptor, &count, MemoryLayout<UInt64>.size)
    }

    private func runDeferred() {
        guard !deferred.isEmpty else { return }
        let batch = deferred
        deferred = []
        for work in batch { work() }
    }

    private func fireDueTimers() {
        let now = clock.now
        // Timers armed while firing get later deadlines than `now`, so this cannot starve the poll.
        while let first = timers.first, first.deadline <= now {
            timers.removeFirst()
            first.work()
        }
    }

    private func runQueued() {
        let batch = shared.withLock { shared -> [@Sendable () -> Void] in
            defer { shared.queue = [] }
            return shared.queue
        }
        for work in batch { work() }
    }

    private func finishShutdown() {
        isShuttingDown = true
        timers.removeAll()
        for channel in Array(channels.values) { channel.closeForShutdown() }
        channels.removeAll()
        // Work queued before shutdown still runs (so `submit` callers resume); new work is refused.
        repeat {
            runDeferred()
            runQueued()
        } while !deferred.isEmpty
        timers.removeAll()
        // A later thread may be given the same pthread_t; it must not pass for this loop's thread.
        loopThread.store(0, ordering: .releasing)
        // Nobody has promised to join (shutdown was only called on the loop): reap ourselves.
        let detaches = shared.withLock { shared -> Bool in
            guard !shared.joinClaimed else { return false }
            shared.threadDetached = true
            return true
        }
        if detaches {
            thread?.detach()
            exited.signal()
        }
    }
}
