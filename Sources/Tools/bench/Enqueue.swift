import Dispatch
import Foundation
import Glibc
import LinkProtocol
import LinkRuntime
import POSIX

/// Figure 1: durable `transferUserInfo` enqueue rate, next to SQLite and a raw append loop.
enum EnqueueBench {
    /// Transfers per second through `LinkEndpoint.transferUserInfo` (the daemons' path: the loop hands
    /// the append to the outbox queue, `TransferLog` group-commits with fdatasync, the completion comes
    /// back on the loop). `producers` transfers are kept in flight: each completion issues the next.
    static func linkRate(directory: String, payloadBytes: Int, count: Int, producers: Int) throws -> Double {
        let root = "\(directory)/link-\(UInt32.random(in: 0...UInt32.max))"
        defer { try? FileManager.default.removeItem(atPath: root) }
        let state = try LinkStateDirectory(root: root) { randomBytes(16) }
        // A known peer makes the endpoint activated (as after a first pairing), so transfers are admitted.
        try state.persistPeer(InstanceID(bytes: randomBytes(16))!)
        let loop = try EventLoop(name: "bench-enqueue")
        defer { loop.shutdown() }
        let endpoint = try LinkEndpoint(
            configuration: LinkConfiguration(role: .phone), state: state, pairingKey: randomBytes(32),
            address: .listen(host: "127.0.0.1", port: 0), loop: loop, seed: 1)
        let driver = EnqueueDriver(
            endpoint: endpoint, payload: [UInt8](repeating: 0x55, count: payloadBytes), count: count)
        loop.execute {
            do {
                try endpoint.start()
            } catch {
                driver.fail("start: \(error)")
                return
            }
            driver.begin(producers: producers)
        }
        driver.finished.wait()
        loop.execute { endpoint.stop() }
        if let failure = driver.failure { throw BenchError("transferUserInfo: \(failure)") }
        return Double(count) / driver.elapsed
    }

    /// Appends per second straight into `TransferLog` from `producers` threads (no event loop): the
    /// log's own group commit, to tell its cost from the runtime's hand-offs.
    static func logRate(directory: String, payloadBytes: Int, count: Int, producers: Int) throws -> Double {
        let root = "\(directory)/log-\(UInt32.random(in: 0...UInt32.max))"
        defer { try? FileManager.default.removeItem(atPath: root) }
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
        let log = try TransferLog(directory: "\(root)/outbox")
        let payload = [UInt8](repeating: 0x55, count: payloadBytes)
        let perThread = max(1, count / producers)
        let group = DispatchGroup()
        let failures = Failures()
        let start = monotonicSeconds()
        for _ in 0..<producers {
            group.enter()
            Thread {
                defer { group.leave() }
                do {
                    for _ in 0..<perThread { _ = try log.append(payload, enqueuedAtMicros: 0) }
                } catch {
                    failures.add("\(error)")
                }
            }.start()
        }
        group.wait()
        let elapsed = monotonicSeconds() - start
        if let failure = failures.first { throw BenchError("TransferLog.append: \(failure)") }
        return Double(perThread * producers) / elapsed
    }

    /// Rows per second from the SQLite helper (WAL, synchronous=FULL, one insert per transaction).
    static func sqliteRate(helper: String, directory: String, payloadBytes: Int, count: Int, producers: Int) throws
        -> Double
    {
        let database = "\(directory)/sqlite-\(UInt32.random(in: 0...UInt32.max)).db"
        defer {
            for suffix in ["", "-wal", "-shm", "-journal"] { unlink(database + suffix) }
        }
        let output = try runTool(helper, [database, "\(payloadBytes)", "\(count)", "\(producers)"])
        guard let field = output.split(separator: " ").first(where: { $0.hasPrefix("ops_per_sec=") }),
            let rate = Double(field.dropFirst("ops_per_sec=".count))
        else { throw BenchError("bench-sqlite printed no rate: \(output)") }
        return rate
    }
}

/// Keeps `producers` transfers in flight on the endpoint's loop until `count` have completed.
private final class EnqueueDriver: @unchecked Sendable {
    // @unchecked: every member but `finished` (a semaphore) is touched only on the endpoint's loop,
    // and `elapsed`/`failure` are read after `finished` is signalled.
    let endpoint: LinkEndpoint
    let payload: [UInt8]
    let count: Int
    let finished = DispatchSemaphore(value: 0)
    var issued = 0
    var completed = 0
    var start = 0.0
    var elapsed = 0.0
    var failure: String?

    init(endpoint: LinkEndpoint, payload: [UInt8], count: Int) {
        self.endpoint = endpoint
        self.payload = payload
        self.count = count
    }

    func begin(producers: Int) {
        start = monotonicSeconds()
        for _ in 0..<producers { issue() }
    }

    func fail(_ reason: String) {
        guard failure == nil else { return }
        failure = reason
        finished.signal()
    }

    private func issue() {
        guard issued < count, failure == nil else { return }
        issued += 1
        endpoint.transferUserInfo(payload) { [self] result in
            if case .failure(let error) = result {
                fail("\(error)")
                return
            }
            completed += 1
            if completed == count {
                elapsed = monotonicSeconds() - start
                finished.signal()
            } else {
                issue()
            }
        }
    }
}

private final class Failures: @unchecked Sendable {
    private let lock = NSLock()
    private var list: [String] = []
    func add(_ failure: String) { lock.withLock { list.append(failure) } }
    var first: String? { lock.withLock { list.first } }
}

func randomBytes(_ count: Int) -> [UInt8] {
    var generator = SystemRandomNumberGenerator()
    return (0..<count).map { _ in UInt8.random(in: 0...255, using: &generator) }
}

/// Runs a tool to completion and returns its stdout; throws with its stderr when it fails.
func runTool(_ executable: String, _ arguments: [String]) throws -> String {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: executable)
    process.arguments = arguments
    let out = Pipe()
    let err = Pipe()
    process.standardOutput = out
    process.standardError = err
    try process.run()
    let output = out.fileHandleForReading.readDataToEndOfFile()
    let errors = err.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    guard process.terminationStatus == 0 else {
        throw BenchError(
            "\(executable) exited \(process.terminationStatus): \(String(decoding: errors, as: UTF8.self))")
    }
    return String(decoding: output, as: UTF8.self)
}
