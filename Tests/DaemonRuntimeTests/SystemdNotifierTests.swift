import DaemonRuntime
import Foundation
import Glibc
import LinkRuntime
import POSIX
import TestSupport
import Testing

/// A bound AF_UNIX datagram socket standing in for systemd's notify socket.
private final class NotifySocket {
    let descriptor: Int32

    /// Binds at `path`, or in the abstract namespace when `path` starts with `@`.
    init(path: String) throws {
        descriptor = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        try #require(descriptor >= 0)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        var bytes = Array(path.utf8)
        let abstract = bytes.first == UInt8(ascii: "@")
        if abstract { bytes[0] = 0 }
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: bytes) }
        let length = socklen_t(MemoryLayout<sa_family_t>.size + bytes.count + (abstract ? 0 : 1))
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, length) }
        }
        try #require(bound == 0, "bind \(path): errno \(errno)")
    }

    deinit { close(descriptor) }

    /// The next datagram, waiting at most 10 s (a hang guard only).
    func receive() throws -> String {
        var entry = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
        try #require(poll(&entry, 1, 10_000) == 1, "no datagram arrived")
        var buffer = [UInt8](repeating: 0, count: 4096)
        let count = buffer.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
        try #require(count >= 0)
        return String(decoding: buffer[0..<count], as: UTF8.self)
    }
}

@Suite("systemd notify: datagrams on NOTIFY_SOCKET, watchdog from WATCHDOG_USEC")
struct SystemdNotifierTests {
    @Test("each notification arrives as one datagram of KEY=value lines on a path socket")
    func pathSocket() throws {
        let directory = try TemporaryDirectory("notify")
        let path = directory.appending("notify.sock")
        let systemd = try NotifySocket(path: path)
        let notifier = SystemdNotifier(environment: ["NOTIFY_SOCKET": path])
        #expect(notifier.isEnabled)

        try notifier.ready(status: "listening on 127.0.0.1:7420")
        #expect(try systemd.receive() == "READY=1\nSTATUS=listening on 127.0.0.1:7420")
        try notifier.status("link up\nwatch paired")
        #expect(try systemd.receive() == "STATUS=link up watch paired")
        try notifier.watchdog()
        #expect(try systemd.receive() == "WATCHDOG=1")
        try notifier.stopping()
        #expect(try systemd.receive() == "STOPPING=1")
        try notifier.reloading()
        let reloading = try systemd.receive().split(separator: "\n")
        #expect(reloading.first == "RELOADING=1")
        #expect(
            reloading.count == 2 && reloading[1].hasPrefix("MONOTONIC_USEC=") && Int(reloading[1].dropFirst(15)) != nil)
    }

    @Test("an @name NOTIFY_SOCKET reaches the abstract namespace")
    func abstractSocket() throws {
        let name = "@watchsync-notify-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        let systemd = try NotifySocket(path: name)
        try SystemdNotifier(environment: ["NOTIFY_SOCKET": name]).ready()
        #expect(try systemd.receive() == "READY=1")
    }

    @Test("without NOTIFY_SOCKET every call is a no-op")
    func disabled() throws {
        let notifier = SystemdNotifier(environment: [:])
        #expect(!notifier.isEnabled)
        try notifier.ready(status: "ignored")
        try notifier.watchdog()
        #expect(!SystemdNotifier(environment: ["NOTIFY_SOCKET": ""]).isEnabled)
    }

    @Test("a NOTIFY_SOCKET nobody listens on is an error naming it")
    func nobodyListening() throws {
        let directory = try TemporaryDirectory("notify")
        let path = directory.appending("gone.sock")
        #expect(throws: SystemCallError(call: "sendto (NOTIFY_SOCKET)", errno: ENOENT, path: path)) {
            try SystemdNotifier(environment: ["NOTIFY_SOCKET": path]).ready()
        }
    }

    @Test(
        "the watchdog interval is half of WATCHDOG_USEC, only for the process WATCHDOG_PID names",
        arguments: [
            (["WATCHDOG_USEC": "2000000"], Duration?.some(.seconds(1))),
            (["WATCHDOG_USEC": "2000000", "WATCHDOG_PID": "4242"], .some(.seconds(1))),
            (["WATCHDOG_USEC": "2000000", "WATCHDOG_PID": "4243"], nil),
            (["WATCHDOG_USEC": "0"], nil),
            (["WATCHDOG_USEC": "soon"], nil),
            ([:], nil),
        ])
    func watchdogInterval(environment: [String: String], interval: Duration?) {
        #expect(SystemdNotifier(environment: environment, processID: 4242).watchdogInterval == interval)
    }
}
