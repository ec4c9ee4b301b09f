import POSIX

/// A TCP endpoint as configured: `127.0.0.1:7420`, `localhost:0`, `[::1]:7420`.
///
/// Hosts are numeric (dotted IPv4, or IPv6 in brackets) or `localhost`: the daemons never resolve
/// names (see `SocketAddress`). Port 0 is allowed and means "let the kernel choose", which tests
/// use and read back from the listener.
package struct NetworkAddress: Sendable, Hashable, CustomStringConvertible {
    /// `127.0.0.1`, `::1` (no brackets) or `localhost`.
    package var host: String
    /// The port; 0 asks the kernel for a free one when listening.
    package var port: UInt16

    /// An address from its parts; `host` is not checked.
    package init(host: String, port: UInt16) {
        self.host = host
        self.port = port
    }

    /// Parses `HOST:PORT`; nil unless the host is dotted IPv4, bracketed IPv6 or `localhost` and the
    /// port is a decimal number from 0 to 65535.
    package init?(parsing text: String) {
        let hostPart: Substring
        let portPart: Substring
        if text.hasPrefix("[") {
            guard let close = text.firstIndex(of: "]"), text[close...].hasPrefix("]:") else { return nil }
            hostPart = text[text.index(after: text.startIndex)..<close]
            portPart = text[text.index(close, offsetBy: 2)...]
            guard SocketAddress.isIPv6(String(hostPart)) else { return nil }
        } else {
            guard let colon = text.lastIndex(of: ":") else { return nil }
            hostPart = text[..<colon]
            portPart = text[text.index(after: colon)...]
            guard hostPart == "localhost" || SocketAddress.isIPv4(String(hostPart)) else { return nil }
        }
        guard !portPart.isEmpty, portPart.count <= 5, portPart.allSatisfy({ $0.isASCII && $0.isNumber }),
            let port = UInt16(portPart)
        else { return nil }
        self.host = String(hostPart)
        self.port = port
    }

    /// `127.0.0.1:7420` or `[::1]:7420`.
    package var description: String {
        host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
    }
}
