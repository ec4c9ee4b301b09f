import Foundation
import Glibc
import POSIX
import TestSupport
import Testing

/// A daemon at its file-descriptor limit (`prlimit --nofile`), as a service with a tight
/// `LimitNOFILE` would be: admin clients past the limit wait in the socket's backlog with a logged
/// reason, the link stays up, and nothing crashes.
@Suite("A daemon at its descriptor limit")
struct DescriptorLimitTests {
    /// Opens a Unix-domain connection to `path`; the descriptor, or -1.
    private static func connect(_ path: String) -> Int32 {
        guard let address = try? SocketAddress(unixPath: path) else { return -1 }
        let descriptor = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else { return -1 }
        guard address.withSockAddr({ Glibc.connect(descriptor, $0, $1) }) == 0 else {
            close(descriptor)
            return -1
        }
        return descriptor
    }

    @Test(
        "phoned at its limit: admin clients wait with a logged reason; the link stays up, status answers once some go")
    func phonedAtItsLimit() async throws {
        let system = try SyncSystem("fd-limit")
        let phoned = try await system.startPhoned()
        try await system.startWatchd()
        try await system.waitUntilLinked()

        let open = try FileManager.default.contentsOfDirectory(atPath: "/proc/\(phoned.pid)/fd").count
        let limit = open + 2
        try await CommandResult.run(
            "/usr/bin/prlimit", ["--pid", "\(phoned.pid)", "--nofile=\(limit):\(limit)"],
            scratch: system.directory.appending("prlimit")
        ).succeeded()
        // More clients than the limit leaves room for: the kernel queues them, phoned cannot accept.
        let clients = (0..<8).map { _ in Self.connect(system.phoneSocket) }
        #expect(clients.allSatisfy { $0 >= 0 })
        var line = ""
        do {
            try await system.eventually("phoned logged that it cannot accept a client") {
                line =
                    system.phonedLog.split(separator: "\n").first { $0.contains("cannot accept an admin client") }
                    .map(String.init) ?? ""
                return !line.isEmpty
            }
        } catch {
            for client in clients where client >= 0 { close(client) }
            throw error
        }
        for client in clients where client >= 0 { close(client) }
        #expect(line.contains("Too many open files (errno 24)"), "\(line)")

        // The clients gone, phoned serves again; it never stopped, nor did the link.
        try await system.phonectl("status").succeeded()
        #expect(phoned.isRunning)
        try await system.waitUntilLinked()
    }
}
