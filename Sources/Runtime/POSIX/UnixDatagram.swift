import Glibc

/// One-shot datagrams to a Unix-domain `SOCK_DGRAM` socket, as systemd's `NOTIFY_SOCKET` takes them.
package enum UnixDatagram {
    /// Sends `bytes` as one datagram to the socket `name`: a path, or, starting with `@`, a name in
    /// Linux's abstract namespace. Errors read `socket (<label>)`, `sendto (<label>)` (naming `name`)
    /// or `sendto (<label> too long)`.
    package static func send(_ bytes: [UInt8], to name: String, label: String) throws(SystemCallError) {
        let descriptor = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else { throw .last("socket (\(label))") }
        defer { close(descriptor) }

        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        var pathBytes = Array(name.utf8)
        // "@name" is the abstract namespace: a leading NUL, and the length counts only the name.
        if pathBytes.first == UInt8(ascii: "@") { pathBytes[0] = 0 }
        let capacity = MemoryLayout.size(ofValue: address.sun_path)
        guard pathBytes.count < capacity else {
            throw SystemCallError(call: "sendto (\(label) too long)", errno: ENAMETOOLONG, path: name)
        }
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: pathBytes) }
        let length = socklen_t(MemoryLayout<sa_family_t>.size + pathBytes.count + (pathBytes[0] == 0 ? 0 : 1))

        while true {
            let sent = withUnsafePointer(to: &address) { pointer in
                pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { socketAddress in
                    bytes.withUnsafeBytes {
                        sendto(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL), socketAddress, length)
                    }
                }
            }
            if sent >= 0 { return }
            if errno == EINTR { continue }
            throw .last("sendto (\(label))", path: name)
        }
    }
}
