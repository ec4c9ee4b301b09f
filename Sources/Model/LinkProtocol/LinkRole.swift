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

/// The watch's side of the session state the phone sees (`WCSession.isPaired`,
/// `isWatchAppInstalled`, `isComplicationEnabled`): what the watch reports in a `watchState` frame.
///
/// On the wire one byte of flags: bit 0 paired, bit 1 watch app installed, bit 2 complication
/// enabled; the other bits must be 0.
package struct WatchState: Equatable, Sendable, Codable, CustomStringConvertible {
    package var isPaired: Bool
    package var isWatchAppInstalled: Bool
    package var isComplicationEnabled: Bool

    /// A paired watch with the app installed and its complication on the watch face: what a watch
    /// that never said otherwise is taken to be.
    package static let installed = WatchState(isPaired: true, isWatchAppInstalled: true, isComplicationEnabled: true)

    package init(isPaired: Bool, isWatchAppInstalled: Bool, isComplicationEnabled: Bool) {
        self.isPaired = isPaired
        self.isWatchAppInstalled = isWatchAppInstalled
        self.isComplicationEnabled = isComplicationEnabled
    }

    /// The state a flags byte spells, or nil when a reserved bit is set.
    package init?(flags: UInt8) {
        guard flags & ~0x07 == 0 else { return nil }
        self.init(
            isPaired: flags & 0x01 != 0, isWatchAppInstalled: flags & 0x02 != 0,
            isComplicationEnabled: flags & 0x04 != 0)
    }

    /// The flags byte.
    package var flags: UInt8 {
        (isPaired ? 0x01 : 0) | (isWatchAppInstalled ? 0x02 : 0) | (isComplicationEnabled ? 0x04 : 0)
    }

    /// Why the phone may not send to this watch now, or nil when it may.
    package var sendRefusal: LinkError? {
        if !isPaired { return .deviceNotPaired }
        if !isWatchAppInstalled { return .watchAppNotInstalled }
        return nil
    }

    package var description: String {
        "paired=\(isPaired) appInstalled=\(isWatchAppInstalled) complicationEnabled=\(isComplicationEnabled)"
    }
}
