import Glibc

/// Facts about, and requests on behalf of, the running process.
package enum CurrentProcess {
    /// `getpid()`.
    package static var id: Int32 { getpid() }

    /// How many processors are online, at least 1.
    package static var onlineProcessorCount: Int { max(1, sysconf(Int32(_SC_NPROCESSORS_ONLN))) }

    /// glibc's `malloc_trim(0)`: returns the heap's free pages to the system. Swift's Glibc module does
    /// not import `<malloc.h>`, so it is looked up by name; elsewhere it does nothing.
    package static func releaseFreeMemory() {
        typealias MallocTrim = @convention(c) (Int) -> Int32
        guard let symbol = dlsym(nil, "malloc_trim") else { return }
        _ = unsafeBitCast(symbol, to: MallocTrim.self)(0)
    }
}
