import Foundation
import POSIX

/// A test-only fault: every `fsync`/`fdatasync` the process makes (`LatencyRecorder.fsync`) first
/// waits while the file named by the environment variable `WATCHSYNC_TEST_SLOW_FSYNC_FILE` exists,
/// until as many milliseconds as it holds have passed. The file is read again every 50 ms, so a
/// test can hold every fsync for as long as it needs (a large number), then remove the file to let
/// them go at once. Without the variable (in production) it costs one check of a constant.
enum SlowFsyncInjection {
    static let variable = "WATCHSYNC_TEST_SLOW_FSYNC_FILE"
    private static let file = ProcessInfo.processInfo.environment[variable]

    static func wait() {
        guard let file else { return }
        let start = ContinuousClock.now
        while let limit = milliseconds(in: file) {
            let left = .milliseconds(limit) - (ContinuousClock.now - start)
            guard left > .zero else { return }
            Thread.sleep(forTimeInterval: Double(min(left, .milliseconds(50)) / .milliseconds(1)) / 1000)
        }
    }

    /// The delay the file holds, or nil when it is gone or holds no positive number.
    private static func milliseconds(in file: String) -> Int? {
        guard let bytes = try? AtomicFile.read(file),
            let milliseconds = Int(
                String(decoding: bytes, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)),
            milliseconds > 0
        else { return nil }
        return milliseconds
    }
}
