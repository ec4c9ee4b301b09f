import Glibc

/// Facts about, and requests on behalf of, the running process.
package enum CurrentProcess {
    /// `getpid()`.
    package static var id: Int32 { getpid() }

    /// The command line: `CommandLine.arguments`, or the kernel's copy (`/proc/self/cmdline`) when
    /// that is empty, as it is under libfaketime's preload (a daemon run on a stepped clock would
    /// otherwise ignore its `--config`).
    package static var arguments: [String] {
        guard CommandLine.arguments.isEmpty else { return CommandLine.arguments }
        guard case .bytes(let bytes) = FileSystem.readRegularFile("/proc/self/cmdline", maximumBytes: 1 << 20) else {
            return []
        }
        var arguments = bytes.split(separator: 0, omittingEmptySubsequences: false).map {
            String(decoding: $0, as: UTF8.self)
        }
        if bytes.last == 0 { arguments.removeLast() }
        return arguments
    }

    /// How many processors are online, at least 1.
    package static var onlineProcessorCount: Int { max(1, sysconf(Int32(_SC_NPROCESSORS_ONLN))) }

    /// Has glibc give a thread's heap back to the system once 4 MiB at its top is free. By default the
    /// threshold follows the largest block freed (up to 64 MiB), and `malloc_trim` never trims the top
    /// of a thread's heap: after a first start over 100,000 runs phoned kept 51–58 MiB resident with
    /// 1 MiB in use, 30 MiB once this is set (figures: docs/PERFORMANCE.md). Call first thing in `main`.
    package static func limitRetainedHeap() {
        typealias Mallopt = @convention(c) (Int32, Int32) -> Int32
        guard let symbol = dlsym(nil, "mallopt") else { return }
        let trimThreshold: Int32 = -1  // M_TRIM_THRESHOLD in <malloc.h>, which Glibc does not import
        _ = unsafeBitCast(symbol, to: Mallopt.self)(trimThreshold, 4 << 20)
    }

    /// glibc's `malloc_trim(0)`: returns the heap's free pages to the system. Swift's Glibc module does
    /// not import `<malloc.h>`, so it is looked up by name; elsewhere it does nothing.
    package static func releaseFreeMemory() {
        typealias MallocTrim = @convention(c) (Int) -> Int32
        guard let symbol = dlsym(nil, "malloc_trim") else { return }
        _ = unsafeBitCast(symbol, to: MallocTrim.self)(0)
    }
}
