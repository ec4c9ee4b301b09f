import AdminCommands
import ArgumentParsing
import DaemonConfiguration
import DaemonRuntime
import Foundation
import LinkProtocol

/// The daemons' configuration files: any bytes as `phoned.json` or `watchd.json`.
///
/// Properties: a refusal names the file; an accepted file loads the same way twice, and its values are
/// ones the daemon can use without trapping (frame limit inside the decoder's range, absolute paths,
/// an address that prints and parses back to itself).
enum ConfigTarget {
    static func check(_ input: inout FuzzInput) throws {
        let watch = input.bool()
        let contents = input.rest()
        try ScratchDirectory.with { directory in
            let path = "\(directory)/\(watch ? "watchd" : "phoned").json"
            try ScratchDirectory.write(contents, to: path)
            /// Loads the file twice: what the checks below need, and whether both loads agree.
            func loadTwice<Configuration: Equatable>(
                _ load: (String, String?) throws(ConfigError) -> Configuration,
                _ facts: (Configuration) -> (Int, NetworkAddress, [String])
            ) throws(ConfigError) -> (frameBytes: Int, address: NetworkAddress, paths: [String], stable: Bool) {
                let configuration = try load(path, directory)
                let (frameBytes, address, paths) = facts(configuration)
                return (frameBytes, address, paths, try load(path, directory) == configuration)
            }
            let loaded: (frameBytes: Int, address: NetworkAddress, paths: [String], stable: Bool)
            do throws(ConfigError) {
                loaded =
                    watch
                    ? try loadTwice(WatchdConfiguration.load(path:workingDirectory:)) {
                        (
                            $0.link.maximumFrameBytes, $0.phoneAddress,
                            [$0.cacheDirectory, $0.stateDirectory, $0.pairingKeyFile, $0.adminSocket]
                        )
                    }
                    : try loadTwice(PhonedConfiguration.load(path:workingDirectory:)) {
                        (
                            $0.link.maximumFrameBytes, $0.listen,
                            [$0.documentsDirectory, $0.stateDirectory, $0.pairingKeyFile, $0.adminSocket]
                        )
                    }
            } catch {
                return try require(error.description.contains(path), "the error does not name the file: \(error)")
            }
            try require(loaded.stable, "the same file loads differently twice")
            try require(
                FrameDecoder.allowedMaximumFrameLengths.contains(loaded.frameBytes),
                "frame limit \(loaded.frameBytes) would trap")
            try require(
                loaded.paths.allSatisfy { $0.hasPrefix("/") }, "a relative path survived loading: \(loaded.paths)")
            try require(
                NetworkAddress(parsing: loaded.address.description) == loaded.address,
                "address \(loaded.address) does not parse back")
        }
    }
}

/// What arrives on the admin socket: any bytes through the daemons' one request decoder
/// (`AdminWire.decode`), as each daemon's command type.
///
/// Properties: a malformed request gets a non-empty reason; a decoded command encodes and decodes to
/// itself; a command the hand reader takes is the one `JSONDecoder` gives; any response encodes as
/// exactly one line of JSON that decodes to itself.
enum AdminRequestTarget {
    static func check(_ input: inout FuzzInput) throws {
        let bytes = input.rest()
        try check(bytes, as: PhoneCommand.self)
        try check(bytes, as: WatchCommand.self)
        try requireOneLine(
            .ok(text: String(decoding: bytes, as: UTF8.self), json: String(decoding: bytes, as: UTF8.self)))
        // The bytes as a reply the CLI reads: what the hand reader takes, JSONDecoder gives alike.
        if let read = bytes.withUnsafeBufferPointer(AdminResponse.readByHand) {
            let decoded = try? JSONDecoder().decode(AdminResponse.self, from: Data(bytes))
            try require(
                decoded == read, "a reply read by hand as \(read), by JSONDecoder \(String(describing: decoded))")
        }
    }

    private static func check<Command: AdminCommand>(_ bytes: [UInt8], as type: Command.Type) throws {
        if let read = bytes.withUnsafeBufferPointer(Command.readByHand) {
            let decoded = try? JSONDecoder().decode(Command.self, from: Data(bytes))
            try require(decoded == read, "the hand reader took \(read), JSONDecoder \(String(describing: decoded))")
        }
        switch AdminWire.decode(bytes, as: Command.self) {
        case .failure(let error):
            try require(!error.description.isEmpty, "a malformed request refused without a reason")
            try requireOneLine(.error(error.description))
        case .success(let command):
            let again = AdminWire.decode(AdminWire.encode(command), as: Command.self)
            try require(again == .success(command), "a decoded command changes on a round trip")
            try requireOneLine(.refused("\(command)"))
        }
    }

    private static func requireOneLine(_ response: AdminResponse) throws {
        let line = response.encoded
        try require(line.last == 0x0A && line.dropLast().allSatisfy { $0 != 0x0A }, "a response is not one line")
        try require(try JSONDecoder().decode(AdminResponse.self, from: Data(line)) == response, "a response changed")
        try require(
            line.withUnsafeBufferPointer(AdminResponse.readByHand) == response, "a response read by hand changed")
    }
}
