/// Which device a link endpoint speaks for; one byte on the wire (1 phone, 2 watch).
///
/// This is separate from who dialled: the role is the device, ``HandshakeSide`` is the TCP direction.
package enum LinkRole: UInt8, Sendable, CustomStringConvertible {
    /// The phone daemon, `phoned`.
    case phone = 1
    /// The watch daemon, `watchd`.
    case watch = 2

    /// The role a well-formed peer of this role has: a phone links only with a watch and vice versa.
    package var counterpart: LinkRole {
        switch self {
        case .phone: .watch
        case .watch: .phone
        }
    }

    /// `phone` or `watch`.
    package var description: String {
        switch self {
        case .phone: "phone"
        case .watch: "watch"
        }
    }
}

/// Whether the peer's app is on screen; one byte on the wire (0 background, 1 foreground).
///
/// The phone can reach the watch app with messages only while it is in the foreground.
package enum AppState: UInt8, Sendable, CustomStringConvertible {
    /// The app is not on screen (for the watch: wrist down).
    case background = 0
    /// The app is on screen.
    case foreground = 1

    /// `background` or `foreground`.
    package var description: String {
        switch self {
        case .background: "background"
        case .foreground: "foreground"
        }
    }
}
