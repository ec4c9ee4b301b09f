import Glibc

/// A system call that failed, with the `errno` it set and, where there is one, the file it was about.
///
/// Every syscall failure in this module is reported as this one type so a log line always reads the
/// same way: `fdatasync(/var/state/outbox/segment-….log) failed: Input/output error (errno 5)`.
package struct SystemCallError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The call that failed, e.g. `"open"` or `"fdatasync"`.
    package let call: String
    /// The `errno` value the call left behind.
    package let errno: Int32
    /// The file or directory the call operated on, when there is one.
    package let path: String?

    /// Records a failed `call`; `path` names the file it was applied to, if any.
    package init(call: String, errno: Int32, path: String? = nil) {
        self.call = call
        self.errno = errno
        self.path = path
    }

    /// Captures the current thread's `errno` for a call that just failed.
    package static func last(_ call: String, path: String? = nil) -> SystemCallError {
        SystemCallError(call: call, errno: Glibc.errno, path: path)
    }

    package var description: String {
        let target = path.map { "(\($0))" } ?? ""
        return "\(call)\(target) failed: \(Errno.describe(errno))"
    }
}
