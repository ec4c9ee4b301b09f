import AdminCommands
import Dispatch
import Foundation
import Glibc
import Synchronization
import TestSupport
import WorkoutModel

extension BenchSuite {
    /// Figure 9: how long each side takes to notice a blackholed link (no FIN, no RST: only the
    /// heartbeats' silence tells; the defaults, 500 ms × 4 missed, promise about 2 s), once on a
    /// quiet machine and once loaded as a parallel `swift test` run loads it: two threads spinning
    /// on the two cores, one rewriting and fsyncing a 4 MiB file (so every fsync is slow), and
    /// phone edits back to back (each a document write and a push). The pair talks through a
    /// `FaultProxy`; the time runs from the blackhole until the slower side's status says unlinked.
    func detection() throws {
        let section = "9. blackhole detection (heartbeats only, defaults: 500 ms × 4 missed)"
        Progress.say("[\(section)]")
        var quiet: [Double] = []
        var loaded: [Double] = []
        for repetition in 1...plan.repetitions {
            Progress.say("  repetition \(repetition)/\(plan.repetitions)")
            quiet.append(try detectionTime(scratch.appending("detection-\(repetition)-quiet"), loaded: false))
            loaded.append(try detectionTime(scratch.appending("detection-\(repetition)-loaded"), loaded: true))
        }
        report.measurement(section, "blackhole detected, quiet machine (slower side)", quiet, unit: "s")
        report.measurement(
            section, "blackhole detected, loaded machine (slower side)", loaded, unit: "s", target: .atMost(3),
            note: "load: 2 spinning threads, a 4 MiB write+fsync loop and phone edits, from 1 s before the blackhole")
    }

    private func detectionTime(_ root: String, loaded: Bool) throws -> Double {
        let pair = try DaemonPair(root: root, binaries: binaries)
        defer { pair.stop() }
        let upstream = pair.port
        let proxy = try blocking { try await FaultProxy(upstreamPort: upstream) }
        defer { proxy.stop() }
        try DaemonConfig.writeWatchd(pair.watch, cache: pair.cache, key: "\(root)/pairing.key", port: proxy.port)
        try pair.startPhoned().waitUntilReady()
        try pair.startWatchd().waitUntilReady()
        try pair.waitUntilLinked()
        let run = try startRun(pair)
        let admin = pair.phone.admin
        let load =
            loaded
            ? MachineLoad(directory: root) { count in
                _ = try? Admin.send(
                    admin,
                    PhoneCommand.set(
                        count % 2 == 0
                            ? .complete(run: run, exercise: 1, set: 1, reps: nil, weight: nil)
                            : .undo(run: run, exercise: 1, set: 1)))
            } : nil
        defer { load?.stop() }
        if loaded { usleep(1_000_000) }
        let start = monotonicSeconds()
        try blocking { try await proxy.setToxics([.blackhole]) }
        var detected: [String: Double] = [:]
        while detected.count < 2 {
            for (side, socket) in [("phone", pair.phone.admin), ("watch", pair.watch.admin)]
            where detected[side] == nil {
                if let status = try? Admin.status(socket), !status.bool("linked") {
                    detected[side] = monotonicSeconds() - start
                }
            }
            if monotonicSeconds() - start > 60 { throw BenchError("the blackhole was not detected in 60 s") }
            usleep(10_000)
        }
        return detected.values.max() ?? .nan
    }
}

/// Keeps the machine busy until stopped: a spinning thread per core, one write+fsync loop, and
/// `work` called over and over (with a count) on a thread of its own.
private final class MachineLoad: Sendable {
    private let stopped = Atomic<Bool>(false)
    private let threads = DispatchGroup()

    init(directory: String, work: @escaping @Sendable (Int) -> Void) {
        threads.enter()
        Thread.detachNewThread { [self] in
            defer { threads.leave() }
            var count = 0
            while !stopped.load(ordering: .relaxed) {
                work(count)
                count += 1
            }
        }
        for _ in 0..<2 {
            threads.enter()
            Thread.detachNewThread { [self] in
                defer { threads.leave() }
                var x: UInt64 = 1
                while !stopped.load(ordering: .relaxed) { x = x &* 6_364_136_223_846_793_005 &+ 1 }
                _ = x
            }
        }
        let path = "\(directory)/load"
        threads.enter()
        Thread.detachNewThread { [self] in
            defer { threads.leave() }
            let block = [UInt8](repeating: 0x5a, count: 4 << 20)
            while !stopped.load(ordering: .relaxed) {
                let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
                guard fd >= 0 else { return }
                _ = block.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
                fsync(fd)
                close(fd)
            }
        }
    }

    func stop() {
        stopped.store(true, ordering: .relaxed)
        threads.wait()
    }
}

/// Runs `body` on the concurrency pool and waits for it (the bench is synchronous).
private func blocking<T: Sendable>(_ body: @escaping @Sendable () async throws -> T) throws -> T {
    let result = Mutex<Result<T, any Error>?>(nil)
    let done = DispatchSemaphore(value: 0)
    Task {
        do {
            let value = try await body()
            result.withLock { $0 = .success(value) }
        } catch {
            result.withLock { $0 = .failure(error) }
        }
        done.signal()
    }
    done.wait()
    return try result.withLock { $0! }.get()
}
