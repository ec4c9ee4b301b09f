import Foundation
import Glibc
import LinkRuntime
import POSIX
import Synchronization
import Testing

/// Connects on `loop` and returns the completion's result.
func connect(
    on loop: EventLoop, host: String = "127.0.0.1", port: UInt16, timeout: Duration = .seconds(10),
    configure: @escaping @Sendable (Connection) -> Void = { _ in }
) async -> Result<Connection, SocketError> {
    await withCheckedContinuation { continuation in
        loop.execute {
            loop.connect(host: host, port: port, timeout: timeout) { result in
                if case .success(let connection) = result { configure(connection) }
                continuation.resume(returning: result)
            }
        }
    }
}

/// A blocking socket the test drives by hand, for peers the loop must not control (one that never
/// reads, a listener that never accepts). Closed on deinit.
final class RawSocket {
    let descriptor: Int32

    init(family: Int32 = AF_INET) throws {
        descriptor = socket(family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        try #require(descriptor >= 0, "socket: errno \(errno)")
    }

    deinit { close(descriptor) }

    /// Binds to 127.0.0.1 on a kernel-chosen port and returns it.
    func bindLoopback() throws -> UInt16 {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        try withSockAddr(&address) { try #require(bind(descriptor, $0, $1) == 0, "bind: errno \(errno)") }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        try withUnsafeMutablePointer(to: &address) {
            try $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                try #require(getsockname(descriptor, $0, &length) == 0)
            }
        }
        return UInt16(bigEndian: address.sin_port)
    }

    /// Connects to 127.0.0.1:`port`, blocking until the handshake completes.
    func connectLoopback(port: UInt16) throws {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        try withSockAddr(&address) { try #require(Glibc.connect(descriptor, $0, $1) == 0, "connect: errno \(errno)") }
    }

    /// Binds to the Unix-domain socket path `path`.
    func bindUnix(path: String) throws {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: Array(path.utf8) + [0])
        }
        try withSockAddr(&address) { try #require(bind(descriptor, $0, $1) == 0, "bind: errno \(errno)") }
    }

    /// Sets an integer socket option.
    func setOption(_ name: Int32, _ value: Int32) {
        var value = value
        _ = setsockopt(descriptor, SOL_SOCKET, name, &value, socklen_t(MemoryLayout<Int32>.size))
    }

    /// Waits (hang guard only) until `poll` reports `events` on the socket.
    func waitUntilReady(for events: Int32) throws {
        var entry = pollfd(fd: descriptor, events: Int16(events), revents: 0)
        try #require(poll(&entry, 1, 30_000) == 1, "socket never became ready for \(events)")
    }

    private func withSockAddr<Address>(
        _ address: inout Address, _ body: (UnsafePointer<sockaddr>, socklen_t) throws -> Void
    ) throws {
        try withUnsafePointer(to: &address) {
            try $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                try body($0, socklen_t(MemoryLayout<Address>.size))
            }
        }
    }
}

/// The inodes of the TCP sockets (any state the kernel still lists them in) that use `port` on either end.
func socketInodes(usingPort port: UInt16) throws -> Set<String> {
    let table = try readProcFile("/proc/net/tcp")
    var inodes: Set<String> = []
    for line in table.split(separator: "\n").dropFirst() {
        let fields = line.split(separator: " ")
        guard fields.count > 9 else { continue }
        let ports = [fields[1], fields[2]].compactMap {
            $0.split(separator: ":").last.flatMap { UInt16($0, radix: 16) }
        }
        if ports.contains(port), fields[9] != "0" { inodes.insert(String(fields[9])) }
    }
    return inodes
}

/// The socket inodes this process holds a descriptor for right now.
func openSocketInodes() throws -> Set<String> {
    let entries = try FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")
    var inodes: Set<String> = []
    for entry in entries {
        guard let target = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\(entry)"),
            target.hasPrefix("socket:[")
        else { continue }
        inodes.insert(String(target.dropFirst("socket:[".count).dropLast()))
    }
    return inodes
}

/// Whether a thread of this process is named `name` (Linux truncates thread names to 15 bytes).
func threadExists(named name: String) -> Bool {
    let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []
    return tasks.contains { task in
        let comm = (try? readProcFile("/proc/self/task/\(task)/comm")) ?? ""
        return comm.trimmingCharacters(in: .whitespacesAndNewlines) == String(name.prefix(15))
    }
}

/// A short name unique to one test, so parallel tests' loop threads are told apart.
func uniqueLoopName(_ prefix: String) -> String {
    "\(prefix)-\(UInt16.random(in: 0...UInt16.max))"
}

/// The whole text of a procfs file, read to EOF: procfs reports size 0, so size-based reads fall short.
func readProcFile(_ path: String) throws -> String {
    // Not #require: a thread's entry can vanish between listing and opening, which callers tolerate.
    guard let file = FileHandle(forReadingAtPath: path) else { throw CocoaError(.fileReadNoSuchFile) }
    defer { try? file.close() }
    return String(decoding: try file.readToEnd() ?? Data(), as: UTF8.self)
}
