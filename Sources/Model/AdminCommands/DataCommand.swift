import ArgumentParsing

/// The `data …` verbs, the same on phonectl and watchctl: raw `Data` messages (`sendMessageData`)
/// to the other daemon, and the ones this daemon received (see `DataCommand.spec`).
package enum DataCommand: Codable, Sendable, Equatable {
    /// Send `bytes` `count` times, one after another; `wantsReply` asks the peer for a reply (the
    /// daemons echo the bytes back).
    case send(bytes: [UInt8], wantsReply: Bool, count: Int)
    /// The data messages received lately, oldest first.
    case received

    /// The wire names of the cases, spelt out so an unknown one is answered with the list
    /// (`AdminCommand.verbs`); a case missing here cannot be encoded, which the mapping tests catch.
    enum CodingKeys: String, CodingKey, CaseIterable {
        case send, received
    }

    static var verbs: [String] { CodingKeys.allCases.map(\.rawValue) }

    /// The most bytes one message carries (the link's message limit, 65,536, plus one so a test can
    /// see `payloadTooLarge`): a bigger argument is refused before the daemon is asked.
    package static let maximumArgumentBytes = 65_537
    /// The most sends one `data send --count` makes.
    package static let maximumCount = 10_000

    /// The `data` group: send, received.
    package static let spec = CommandSpec(
        name: "data", abstract: "Raw Data messages (sendMessageData) to the other daemon.",
        subcommands: [
            CommandSpec(
                name: "send",
                abstract: "Send bytes; fails at once when the peer is not reachable, as sendMessage does.",
                arguments: [ArgumentSpec("payload", help: "The bytes: UTF-8 text, or hex digits with --hex.")],
                options: [
                    OptionSpec(
                        "count", help: "Send it this many times, each after the last one's outcome (default 1).",
                        valueName: "n")
                ],
                flags: [
                    FlagSpec("hex", help: "The payload is hex digits (two per byte)."),
                    FlagSpec("reply", help: "Ask for a reply (the peer echoes the bytes) and print it."),
                    FlagSpec.json,
                ]),
            CommandSpec(
                name: "received", abstract: "The data messages received lately (the newest 32), oldest first.",
                flags: [FlagSpec.json]),
        ])

    init(_ command: ParsedCommand) throws(UsageError) {
        switch command.path {
        case ["data", "send"]:
            let payload = try command.string("payload")
            let bytes: [UInt8]
            if command.flag("hex") {
                guard let decoded = Self.bytes(hex: payload) else {
                    throw UsageError("payload is not hex (two digits per byte): \(payload.prefix(40))")
                }
                bytes = decoded
            } else {
                bytes = Array(payload.utf8)
            }
            self = .send(
                bytes: bytes, wantsReply: command.flag("reply"), count: try command.optionalInteger("count") ?? 1)
        case ["data", "received"]:
            self = .received
        default:
            throw UsageError.unknownCommand(command.path)
        }
        try validate()
    }

    package func validate() throws(UsageError) {
        guard case .send(let bytes, _, let count) = self else { return }
        guard bytes.count <= Self.maximumArgumentBytes else {
            throw UsageError("payload of \(bytes.count) bytes is over \(Self.maximumArgumentBytes)")
        }
        guard (1...Self.maximumCount).contains(count) else {
            throw UsageError("--count must be from 1 to \(Self.maximumCount), got \(count)")
        }
    }

    /// The bytes `hex` spells (either letter case), or nil when it is not an even run of hex digits.
    package static func bytes(hex: String) -> [UInt8]? {
        let digits = Array(hex.utf8)
        guard digits.count % 2 == 0 else { return nil }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(digits.count / 2)
        var index = 0
        while index < digits.count {
            guard let high = nibble(digits[index]), let low = nibble(digits[index + 1]) else { return nil }
            bytes.append(high << 4 | low)
            index += 2
        }
        return bytes
    }

    /// Lowercase hex, two digits per byte.
    package static func hex(_ bytes: some Sequence<UInt8>) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var text: [UInt8] = []
        for byte in bytes {
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 0x0F)])
        }
        return String(decoding: text, as: UTF8.self)
    }

    private static func nibble(_ digit: UInt8) -> UInt8? {
        switch digit {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): digit - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): digit - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): digit - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}

extension AdminReply {
    /// `data send`: how the (last) message ended; `reply` is the peer's reply in hex, when it sent
    /// one; `roundTripMilliseconds` from the send to its outcome, as the daemon measured it; with
    /// `--count`, `roundTripsMilliseconds` has every send's, in order.
    package struct DataSent: Codable, Equatable, Sendable {
        package var outcome: String
        package var bytes: Int
        package var reply: String?
        package var roundTripMilliseconds: Double?
        package var roundTripsMilliseconds: [Double]?
        package init(
            outcome: String, bytes: Int, reply: String?, roundTripMilliseconds: Double? = nil,
            roundTripsMilliseconds: [Double]? = nil
        ) {
            self.outcome = outcome
            self.bytes = bytes
            self.reply = reply
            self.roundTripMilliseconds = roundTripMilliseconds
            self.roundTripsMilliseconds = roundTripsMilliseconds
        }
    }

    /// One entry of `data received`: when it came (UTC), its size, its bytes in hex, and whether the
    /// sender asked for a reply.
    package struct DataReceived: Codable, Equatable, Sendable {
        package var receivedAt: String
        package var bytes: Int
        package var hex: String
        package var wantsReply: Bool
        package init(receivedAt: String, bytes: Int, hex: String, wantsReply: Bool) {
            self.receivedAt = receivedAt
            self.bytes = bytes
            self.hex = hex
            self.wantsReply = wantsReply
        }
    }
}
