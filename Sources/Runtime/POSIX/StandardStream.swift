import Glibc

/// The process's standard output or standard error, written to directly with `write(2)`.
package enum StandardStream {
    case output
    case error

    /// Writes `text` whole where possible, retrying short writes and `EINTR`. A reader that has gone
    /// away (a closed pipe) ends the write silently: there is nowhere left to report that.
    package func write(_ text: String) {
        let descriptor: Int32 = self == .output ? 1 : 2
        let bytes = Array(text.utf8)
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress! + offset, $0.count - offset) }
            if written > 0 {
                offset += written
            } else if written < 0, errno == EINTR {
                continue
            } else {
                return
            }
        }
    }
}
