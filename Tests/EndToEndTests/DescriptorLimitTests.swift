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
        "phoned near its limit keeps descriptors for its files: admin clients past them wait with a logged reason, a watch edit meanwhile lands, nothing restarts"
    )
    func phonedAtItsLimit() async throws {
        let system = try SyncSystem("fd-limit")
        let phoned = try await system.startPhoned()
        try await system.startWatchd()
        try await system.waitUntilLinked()
        let split = try await system.createSplit("Legs", ["Squat:2x5@100"])
        let run = try await system.startRun(split)
        try await system.waitForWatchRun(run)

        // Room for 4 clients above the descriptors kept for phoned's own files.
        let open = try FileManager.default.contentsOfDirectory(atPath: "/proc/\(phoned.pid)/fd").count
        let limit = open + Int(Listener.reservedDescriptors) + 4
        try await CommandResult.run(
            "/usr/bin/prlimit", ["--pid", "\(phoned.pid)", "--nofile=\(limit):\(limit)"],
            scratch: system.directory.appending("prlimit")
        ).succeeded()
        // Many more clients than that: the kernel queues them, phoned accepts 4 and stops.
        let clients = (0..<32).map { _ in Self.connect(system.phoneSocket) }
        #expect(clients.allSatisfy { $0 >= 0 })
        var line = ""
        do {
            try await system.eventually("phoned logged that it stopped accepting clients") {
                line =
                    system.phonedLog.split(separator: "\n").first { $0.contains("cannot accept an admin client") }
                    .map(String.init) ?? ""
                return !line.isEmpty
            }
            // A watch edit needs phoned to write its document: the kept descriptors are there for it.
            try await system.watchctl("complete", run, "1", "1").succeeded()
            try await system.eventually("the watch heard its edit is on the phone") {
                try await system.watchctl("status", "--json").succeeded().standardOutput.contains(
                    "\"undeliveredEdits\":0")
            }
        } catch {
            for client in clients where client >= 0 { close(client) }
            throw error
        }
        for client in clients where client >= 0 { close(client) }
        #expect(line.contains("kept for the daemon's files"), "\(line)")

        // The clients gone, phoned serves again; it never stopped, nor did the link.
        #expect(try await system.phoneRun(run).logs[0].sets[0].isDone)
        #expect(phoned.isRunning)
        #expect(!system.phonedLog.contains("durable write failed"))
        try await system.waitUntilLinked()
    }
}
