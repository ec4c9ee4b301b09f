import POSIX

/// Tells systemd about the daemon's state (`Type=notify`) without libsystemd: one `AF_UNIX`
/// `SOCK_DGRAM` datagram per message to the socket named by `NOTIFY_SOCKET`.
///
/// `NOTIFY_SOCKET` is a filesystem path (`/run/systemd/notify`) or, starting with `@`, a name in
/// the abstract namespace. When it is absent every call is a no-op, so the daemons run the same
/// way from a shell. Unlike `sd_notify` this never unsets the variable: the daemons spawn nothing.
///
/// The watchdog follows `sd_watchdog_enabled`: `WATCHDOG_USEC` set to a positive number (and
/// `WATCHDOG_PID`, if set, equal to this process's ID) enables it, and `watchdogInterval` is half of
/// it — the interval at which to send `WATCHDOG=1` so one late ping does not get the service killed.
package struct SystemdNotifier: Sendable {
    /// The datagram socket's address as given in `NOTIFY_SOCKET`, or nil when not run by systemd.
    package let socketName: String?
    /// How often to call `watchdog()`, or nil when systemd's watchdog is not enabled for us.
    package let watchdogInterval: Duration?

    /// Reads `NOTIFY_SOCKET`, `WATCHDOG_USEC` and `WATCHDOG_PID` from `environment` (pass
    /// `ProcessInfo.processInfo.environment` in a daemon); `processID` is compared with `WATCHDOG_PID`.
    package init(environment: [String: String], processID: Int32 = CurrentProcess.id) {
        let name = environment["NOTIFY_SOCKET"] ?? ""
        socketName = name.isEmpty ? nil : name
        let watchedPID = environment["WATCHDOG_PID"].flatMap { Int32($0) }
        if let text = environment["WATCHDOG_USEC"], let microseconds = Int64(text), microseconds > 0,
            watchedPID == nil || watchedPID == processID
        {
            watchdogInterval = .microseconds(microseconds / 2)
        } else {
            watchdogInterval = nil
        }
    }

    /// Whether notifications go anywhere.
    package var isEnabled: Bool { socketName != nil }

    /// `READY=1`, with a `STATUS=` line if given: start-up has finished (sockets bound, state loaded).
    package func ready(status: String? = nil) throws(SystemCallError) {
        try send(["READY=1"] + (status.map { ["STATUS=\($0)"] } ?? []))
    }

    /// `STATUS=…`: a one-line, human-readable state shown by `systemctl status`.
    package func status(_ text: String) throws(SystemCallError) {
        try send(["STATUS=\(text)"])
    }

    /// `WATCHDOG=1`: the main loop is alive. Call every `watchdogInterval`.
    package func watchdog() throws(SystemCallError) {
        try send(["WATCHDOG=1"])
    }

    /// `STOPPING=1`: graceful shutdown has begun.
    package func stopping() throws(SystemCallError) {
        try send(["STOPPING=1"])
    }

    /// `RELOADING=1` with `MONOTONIC_USEC=` (which `Type=notify-reload` requires): a configuration
    /// reload has begun; send `ready()` again when it is done.
    package func reloading() throws(SystemCallError) {
        let (seconds, attoseconds) = SystemClock.monotonic().components
        let microseconds = seconds * 1_000_000 + attoseconds / 1_000_000_000_000
        try send(["RELOADING=1", "MONOTONIC_USEC=\(microseconds)"])
    }

    /// Sends `assignments` as one datagram of newline-separated `KEY=value` lines; no-op when disabled.
    ///
    /// Newlines inside a value would start a bogus assignment, so they are replaced by spaces.
    package func send(_ assignments: [String]) throws(SystemCallError) {
        guard let socketName else { return }
        let payload = assignments.map { $0.replacingNewlines() }.joined(separator: "\n")
        try UnixDatagram.send(Array(payload.utf8), to: socketName, label: "NOTIFY_SOCKET")
    }
}

extension String {
    fileprivate func replacingNewlines() -> String {
        String(map { $0 == "\n" || $0 == "\r\n" || $0 == "\r" ? " " : $0 })
    }
}
