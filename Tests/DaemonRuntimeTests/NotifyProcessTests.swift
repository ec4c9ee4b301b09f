import DaemonConfiguration
import DaemonRuntime
import Foundation
import Glibc
import TestSupport
import Testing

/// A non-blocking AF_UNIX datagram socket bound at a path, standing in for systemd's notify socket
/// when the test spawns a real daemon.
private final class FakeSystemdSocket: Sendable {
    let path: String
    private let descriptor: Int32

    init(path: String) throws {
        self.path = path
        descriptor = socket(
            AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
        try #require(descriptor >= 0)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        try #require(bytes.count < MemoryLayout.size(ofValue: address.sun_path), "socket path too long: \(path)")
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: bytes) }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        try #require(bound == 0, "bind \(path): errno \(errno)")
    }

    deinit { close(descriptor) }

    /// The next datagram, or nil if none arrives within `timeout` (a hang guard, not a timing assertion).
    func next(timeout: Duration = .seconds(10)) async throws -> String? {
        let clock = ContinuousClock()
        let deadline = clock.now.advanced(by: timeout)
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = buffer.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
            if count >= 0 { return String(decoding: buffer[0..<count], as: UTF8.self) }
            try #require(errno == EAGAIN || errno == EINTR, "recv on the notify socket: errno \(errno)")
            if clock.now >= deadline { return nil }
            try await Task.sleep(for: .milliseconds(5))
        }
    }

    /// Datagrams until one contains `line` (returned with everything before it), or nil on timeout.
    func next(containing line: String, timeout: Duration = .seconds(10)) async throws -> [String]? {
        var received: [String] = []
        while let datagram = try await next(timeout: timeout) {
            received.append(datagram)
            if datagram.split(separator: "\n").contains(Substring(line)) { return received }
        }
        return nil
    }
}

/// One daemon as the notify tests run it: its binary, a config with port 0 and a private key, its ready line.
struct DaemonUnderTest: CustomStringConvertible, Sendable {
    let name: String

    var description: String { name }

    /// Writes the daemon's config (and the key, mode 0600) into `directory`; returns the config's path.
    func writeConfiguration(in directory: TemporaryDirectory) throws -> String {
        let key = directory.appending("pairing.key")
        try Data("00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff\n".utf8)
            .write(to: URL(fileURLWithPath: key))
        try #require(chmod(key, 0o600) == 0)
        let json: String
        if name == "phoned" {
            var configuration = PhonedConfiguration.defaults
            configuration.documentsDirectory = directory.appending("Documents")
            configuration.stateDirectory = directory.appending("state")
            configuration.listen = NetworkAddress(host: "127.0.0.1", port: 0)
            configuration.pairingKeyFile = key
            configuration.adminSocket = directory.appending("admin.sock")
            json = configuration.fileText
        } else {
            // Nothing listens there: watchd is ready without the phone and keeps redialling.
            var configuration = WatchdConfiguration.defaults
            configuration.cacheDirectory = directory.appending("cache")
            configuration.stateDirectory = directory.appending("state")
            configuration.phoneAddress = NetworkAddress(host: "127.0.0.1", port: try freeLoopbackPort())
            configuration.pairingKeyFile = key
            configuration.adminSocket = directory.appending("admin.sock")
            json = configuration.fileText
        }
        let path = directory.appending("\(name).json")
        try Data(json.utf8).write(to: URL(fileURLWithPath: path))
        return path
    }
}

@Suite("The daemons talk to systemd: READY=1, WATCHDOG=1 and STOPPING=1 on NOTIFY_SOCKET")
struct NotifyProcessTests {
    static let daemons = [DaemonUnderTest(name: "phoned"), DaemonUnderTest(name: "watchd")]

    @Test(
        "READY=1 once the readiness line is out, WATCHDOG=1 every WATCHDOG_USEC/2, STOPPING=1 and exit 0 on SIGTERM",
        arguments: daemons)
    func notifiesSystemd(_ daemon: DaemonUnderTest) async throws {
        let executable = BuildProducts.executable(daemon.name)
        try #require(
            FileManager.default.isExecutableFile(atPath: executable),
            "\(executable) is missing: build the package (swift build) before the tests")
        let directory = try TemporaryDirectory("notify-\(daemon.name)")
        let systemd = try FakeSystemdSocket(path: directory.appending("notify"))
        let configuration = try daemon.writeConfiguration(in: directory)

        // WATCHDOG_PID is cleared so a WATCHDOG_PID inherited from a test runner under systemd
        // cannot switch the daemon's watchdog off.
        let process = try DaemonProcess(
            executable: executable, arguments: ["--config", configuration],
            environment: ["NOTIFY_SOCKET": systemd.path, "WATCHDOG_USEC": "200000", "WATCHDOG_PID": ""])
        _ = try await process.waitForLine(containing: "\(daemon.name) ready")

        // Nothing before READY=1: the watchdog starts only once the daemon is ready.
        let first = try #require(try await systemd.next(), "no notification after the readiness line")
        #expect(first.hasPrefix("READY=1\n") || first == "READY=1", "first datagram: \(first)")
        #expect(first.contains("STATUS="), "READY=1 carries a STATUS= line for systemctl status")

        // 200 ms watchdog → a ping every 100 ms; five in a row shows it keeps coming.
        for ping in 1...5 {
            let datagram = try await systemd.next()
            #expect(datagram == "WATCHDOG=1", "watchdog ping \(ping): \(datagram ?? "none")")
        }

        process.send(SIGTERM)
        let untilStopping = try #require(
            try await systemd.next(containing: "STOPPING=1"), "no STOPPING=1 after SIGTERM")
        #expect(untilStopping.dropLast().allSatisfy { $0 == "WATCHDOG=1" }, "before STOPPING=1: \(untilStopping)")
        #expect(try await process.waitForExit() == 0, "\(daemon.name) stderr: \(process.standardError)")
        // The loop is gone: no more watchdog pings after the stop.
        #expect(try await systemd.next(timeout: .milliseconds(300)) == nil)
    }

    @Test(
        "without NOTIFY_SOCKET (run from a shell) notifying is a no-op: ready, SIGTERM, exit 0 all the same",
        arguments: daemons)
    func quietWithoutSystemd(_ daemon: DaemonUnderTest) async throws {
        let executable = BuildProducts.executable(daemon.name)
        try #require(FileManager.default.isExecutableFile(atPath: executable), "\(executable) is missing")
        let directory = try TemporaryDirectory("notify-\(daemon.name)")
        let configuration = try daemon.writeConfiguration(in: directory)
        let process = try DaemonProcess(
            executable: executable, arguments: ["--config", configuration],
            environment: ["NOTIFY_SOCKET": "", "WATCHDOG_USEC": "200000"])
        _ = try await process.waitForLine(containing: "\(daemon.name) ready")
        process.send(SIGTERM)
        #expect(try await process.waitForExit() == 0, "\(daemon.name) stderr: \(process.standardError)")
    }
}
