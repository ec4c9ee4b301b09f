import Glibc

/// An IPv4, IPv6 or Unix-domain socket address in the kernel's own layout, ready for `bind`/`connect`.
///
/// Hosts are numeric or `localhost` only: the loop never resolves names, because `getaddrinfo`
/// blocks and the link only ever talks to configured addresses.
package struct SocketAddress: Sendable, CustomStringConvertible {
    private var storage: sockaddr_storage
    /// How many bytes of `storage` are meaningful.
    private(set) var length: socklen_t

    /// The address family (`AF_INET`, `AF_INET6` or `AF_UNIX`).
    package var family: Int32 { Int32(storage.ss_family) }

    /// The longest Unix-domain socket path, in bytes, excluding the terminating NUL.
    package static let maximumUnixPathBytes = MemoryLayout.size(ofValue: sockaddr_un().sun_path) - 1

    /// The address of `host` (`"127.0.0.1"`, `"::1"`, `"localhost"`) and `port`.
    package init(host: String, port: UInt16) throws(SocketError) {
        storage = sockaddr_storage()
        let numeric = host == "localhost" ? "127.0.0.1" : host
        var ipv4 = sockaddr_in()
        if inet_pton(AF_INET, numeric, &ipv4.sin_addr) == 1 {
            ipv4.sin_family = sa_family_t(AF_INET)
            ipv4.sin_port = port.bigEndian
            length = socklen_t(MemoryLayout<sockaddr_in>.size)
            withUnsafeMutableBytes(of: &storage) { $0.storeBytes(of: ipv4, as: sockaddr_in.self) }
            return
        }
        var ipv6 = sockaddr_in6()
        if inet_pton(AF_INET6, numeric, &ipv6.sin6_addr) == 1 {
            ipv6.sin6_family = sa_family_t(AF_INET6)
            ipv6.sin6_port = port.bigEndian
            length = socklen_t(MemoryLayout<sockaddr_in6>.size)
            withUnsafeMutableBytes(of: &storage) { $0.storeBytes(of: ipv6, as: sockaddr_in6.self) }
            return
        }
        throw .unsupportedHost(host)
    }

    /// Whether `text` is a numeric IPv4 address, such as `127.0.0.1`.
    package static func isIPv4(_ text: String) -> Bool {
        var address = in_addr()
        return inet_pton(AF_INET, text, &address) == 1
    }

    /// Whether `text` is a numeric IPv6 address (without brackets), such as `::1`.
    package static func isIPv6(_ text: String) -> Bool {
        var address = in6_addr()
        return inet_pton(AF_INET6, text, &address) == 1
    }

    /// The Unix-domain socket address of the file at `path`.
    package init(unixPath path: String) throws(SocketError) {
        let bytes = Array(path.utf8)
        guard bytes.count <= Self.maximumUnixPathBytes else {
            throw .unixPathTooLong(path: path, maximumBytes: Self.maximumUnixPathBytes)
        }
        var unix = sockaddr_un()
        unix.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &unix.sun_path) { raw in
            raw.copyBytes(from: bytes)
            raw[bytes.count] = 0
        }
        storage = sockaddr_storage()
        length = socklen_t(MemoryLayout<sockaddr_un>.size)
        withUnsafeMutableBytes(of: &storage) { $0.storeBytes(of: unix, as: sockaddr_un.self) }
    }

    /// Reads an address the kernel writes, as `getsockname`/`getpeername`/`accept` do.
    ///
    /// Returns nil when `fill` fails (returns non-zero).
    package static func filled(by fill: (UnsafeMutablePointer<sockaddr>, inout socklen_t) -> Int32) -> SocketAddress? {
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let result = withUnsafeMutablePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { fill($0, &length) }
        }
        guard result == 0 else { return nil }
        return SocketAddress(storage: storage, length: length)
    }

    private init(storage: sockaddr_storage, length: socklen_t) {
        self.storage = storage
        self.length = length
    }

    /// Calls `body` with the address as a `sockaddr` pointer and its length.
    package func withSockAddr<Result>(_ body: (UnsafePointer<sockaddr>, socklen_t) -> Result) -> Result {
        withUnsafePointer(to: storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { body($0, length) }
        }
    }

    /// The TCP port, or nil for a Unix-domain address.
    package var port: UInt16? {
        switch family {
        case AF_INET: return UInt16(bigEndian: withUnsafeBytes(of: storage) { $0.load(as: sockaddr_in.self) }.sin_port)
        case AF_INET6:
            return UInt16(bigEndian: withUnsafeBytes(of: storage) { $0.load(as: sockaddr_in6.self) }.sin6_port)
        default: return nil
        }
    }

    /// The numeric host (`"127.0.0.1"`, `"::1"`), or the path for a Unix-domain address.
    package var host: String {
        var text = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN) + 1)
        switch family {
        case AF_INET:
            var address = withUnsafeBytes(of: storage) { $0.load(as: sockaddr_in.self) }.sin_addr
            _ = inet_ntop(AF_INET, &address, &text, socklen_t(text.count))
        case AF_INET6:
            var address = withUnsafeBytes(of: storage) { $0.load(as: sockaddr_in6.self) }.sin6_addr
            _ = inet_ntop(AF_INET6, &address, &text, socklen_t(text.count))
        case AF_UNIX:
            let pathOffset = MemoryLayout<sa_family_t>.size
            let pathLength = Int(length) - pathOffset
            guard pathLength > 0 else { return "" }
            let bytes = withUnsafeBytes(of: storage) { Array($0[pathOffset..<(pathOffset + pathLength)]) }
            return String(decoding: bytes.prefix { $0 != 0 }, as: UTF8.self)
        default:
            return "family \(family)"
        }
        return String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// `127.0.0.1:8080`, `[::1]:8080` or `unix:/path/to.sock`, for logs and errors.
    package var description: String {
        if let port { return SocketError.join(host, port) }
        let path = host
        return path.isEmpty ? "unix:(unnamed)" : "unix:\(path)"
    }
}
