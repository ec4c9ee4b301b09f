import Glibc

/// The `errno` values code outside this module tests for, by name, and how any of them reads.
package enum Errno {
    /// `ENOENT`: no such file or directory.
    package static let noSuchFile = ENOENT
    /// `EEXIST`: the file exists.
    package static let fileExists = EEXIST
    /// `EACCES`: permission denied.
    package static let accessDenied = EACCES
    /// `EIO`: an input/output error.
    package static let ioError = EIO
    /// `ENAMETOOLONG`: a path or name is too long.
    package static let nameTooLong = ENAMETOOLONG

    /// `strerror`'s text, e.g. "No such file or directory".
    package static func text(_ code: Int32) -> String {
        String(cString: strerror(code))
    }

    /// The text plus the number, e.g. "Connection refused (errno 111)".
    package static func describe(_ code: Int32) -> String {
        "\(text(code)) (errno \(code))"
    }
}
