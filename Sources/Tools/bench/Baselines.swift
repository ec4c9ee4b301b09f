import DurableFiles
import Foundation
import Glibc

/// Monotonic time in seconds, for intervals only.
func monotonicSeconds() -> Double {
    var now = timespec()
    clock_gettime(CLOCK_MONOTONIC, &now)
    return Double(now.tv_sec) + Double(now.tv_nsec) / 1e9
}

/// Seconds `body` took.
func timed(_ body: () throws -> Void) rethrows -> Double {
    let start = monotonicSeconds()
    try body()
    return monotonicSeconds() - start
}

struct BenchError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

func check(_ result: Int32, _ call: String) throws {
    if result < 0 { throw BenchError("\(call) failed: \(String(cString: strerror(errno)))") }
}

/// The machine's limits, measured in the same run as the figures they bound.
enum Baselines {
    /// A raw append + fdatasync loop on one file: the disk's durable-append rate for one writer.
    static func rawAppendRate(directory: String, payloadBytes: Int, count: Int) throws -> Double {
        let path = "\(directory)/raw-append-\(UInt32.random(in: 0...UInt32.max)).log"
        let fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o644)
        try check(fd, "open \(path)")
        defer {
            close(fd)
            unlink(path)
        }
        var payload = [UInt8](repeating: 0x5A, count: payloadBytes)
        let elapsed = try timed {
            for index in 0..<count {
                payload[0] = UInt8(truncatingIfNeeded: index)
                let written = payload.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
                guard written == payloadBytes else { throw BenchError("short write on \(path)") }
                try check(fdatasync(fd), "fdatasync")
            }
        }
        return Double(count) / elapsed
    }

    /// Latencies (seconds) of `AtomicFile.write` — temp file, fsync, rename, fsync of the directory —
    /// the primitive every document, slot and mark write uses; with `idleBefore`, the disk is left
    /// idle at least that long before each (a write that follows other work, not another write).
    static func atomicReplaceLatencies(
        directory: String, bytes: [UInt8], count: Int, idleBefore: Duration = .zero
    ) throws -> [Double] {
        let folder = "\(directory)/atomic-\(UInt32.random(in: 0...UInt32.max))"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        var latencies: [Double] = []
        latencies.reserveCapacity(count)
        var contents = bytes
        for index in 0..<count {
            contents[0] = UInt8(ascii: "{")
            if contents.count > 1 { contents[contents.count - 1] = UInt8(truncatingIfNeeded: index) }
            // Alternate between two names: the same shape as rewriting one document repeatedly.
            let path = "\(folder)/\(index % 2).json"
            if idleBefore > .zero { Thread.sleep(forTimeInterval: Double(idleBefore / .microseconds(1)) / 1e6) }
            latencies.append(try timed { try AtomicFile.write(contents, to: path) })
        }
        return latencies
    }

    /// Round-trip latencies (seconds) of a `messageBytes` ping answered by an echo over loopback TCP
    /// (TCP_NODELAY on both sides, the link's setting), one thread each side.
    static func loopbackRoundTrips(count: Int, messageBytes: Int = 64) throws -> [Double] {
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        try check(listener, "socket")
        defer { close(listener) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = 0
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let length = socklen_t(MemoryLayout<sockaddr_in>.size)
        try check(
            withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(listener, $0, length) }
            }, "bind")
        try check(Glibc.listen(listener, 1), "listen")
        var bound = sockaddr_in()
        var boundLength = length
        try check(
            withUnsafeMutablePointer(to: &bound) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(listener, $0, &boundLength) }
            }, "getsockname")

        let echo = Thread {
            let connection = accept(listener, nil, nil)
            guard connection >= 0 else { return }
            defer { close(connection) }
            setNoDelay(connection)
            var buffer = [UInt8](repeating: 0, count: messageBytes)
            while readFully(connection, &buffer), writeFully(connection, buffer) {}
        }
        echo.start()

        let client = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        try check(client, "socket")
        defer { close(client) }
        try check(
            withUnsafePointer(to: &bound) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(client, $0, length) }
            }, "connect")
        setNoDelay(client)
        var message = [UInt8](repeating: 0x42, count: messageBytes)
        var latencies: [Double] = []
        latencies.reserveCapacity(count)
        // A few unmeasured round trips first (connection warm-up).
        for index in 0..<(count + 50) {
            message[0] = UInt8(truncatingIfNeeded: index)
            let start = monotonicSeconds()
            guard writeFully(client, message), readFully(client, &message) else {
                throw BenchError("loopback echo failed: \(String(cString: strerror(errno)))")
            }
            if index >= 50 { latencies.append(monotonicSeconds() - start) }
        }
        shutdown(client, Int32(SHUT_RDWR))
        return latencies
    }

    private static func setNoDelay(_ fd: Int32) {
        var one: Int32 = 1
        setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
    }

    private static func readFully(_ fd: Int32, _ buffer: inout [UInt8]) -> Bool {
        var done = 0
        let total = buffer.count
        while done < total {
            let got = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress! + done, total - done) }
            if got <= 0 { return false }
            done += got
        }
        return true
    }

    private static func writeFully(_ fd: Int32, _ buffer: [UInt8]) -> Bool {
        var done = 0
        while done < buffer.count {
            let sent = buffer.withUnsafeBytes {
                send(fd, $0.baseAddress! + done, buffer.count - done, Int32(MSG_NOSIGNAL))
            }
            if sent <= 0 { return false }
            done += sent
        }
        return true
    }
}
