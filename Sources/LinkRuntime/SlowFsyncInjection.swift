import Foundation
import POSIX

/// A test-only fault: every `fsync`/`fdatasync` the process makes (`LatencyRecorder.fsync`) first
/// sleeps for the number of milliseconds written in the file named by the environment variable
/// `WATCHSYNC_TEST_SLOW_FSYNC_FILE`, while that file exists; a test writes it to make the disk slow
/// mid-run, and removes it to make it fast again. Without the variable (in production) it costs one
/// check of a constant.
enum SlowFsyncInjection {
    static let variable = "WATCHSYNC_TEST_SLOW_FSYNC_FILE"
    private static let file = ProcessInfo.processInfo.environment[variable]

    static func wait() {
        guard let file, let bytes = try? AtomicFile.read(file),
            let milliseconds = Int(
                String(decoding: bytes, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)),
            milliseconds > 0
        else { return }
        Thread.sleep(forTimeInterval: Double(milliseconds) / 1000)
    }
}
