import Foundation
import Glibc
import LinkProtocol
import LinkRuntime
import POSIX
import Synchronization
import TestSupport
import Testing

/// A pairing key of 32 random bytes, one per test: an endpoint left redialling by another test
/// (its phone already stopped) could otherwise authenticate to a phone that reused the port, and take
/// its link from the test's own watch.
func freshPairingKey() -> [UInt8] {
    var random = SystemRandomNumberGenerator()
    return (0..<32).map { _ in UInt8.random(in: .min ... .max, using: &random) }
}

/// A pairing key file (mode 0600) in `directory`, holding `key`.
func writeKeyFile(in directory: TemporaryDirectory, key: String = "0123456789abcdef0123456789abcdef") throws -> String {
    let path = directory.appending("pairing.key")
    try Data("\(key)\n".utf8).write(to: URL(fileURLWithPath: path))
    chmod(path, 0o600)
    return path
}

/// One real link endpoint on its own event loop, with real state files, recording its notifications.
/// Received messages are answered per `messageAnswer` (nil: never answered).
final class TestEndpoint: Sendable {
    let loop: EventLoop
    let endpoint: LinkEndpoint
    let notifications = Recorder<LinkNotification>()
    let port: UInt16?
    private let answer: AnswerBox

    /// How received messages are answered; a class so the loop's closure can share it (Mutex inside).
    final class AnswerBox: Sendable {
        let value: Mutex<MessageAnswer?>
        init(_ value: MessageAnswer?) { self.value = Mutex(value) }
    }

    init(
        role: LinkRole, state: String, key: [UInt8], address: LinkEndpoint.Address,
        messageAnswer: MessageAnswer? = .handled, configure: (inout LinkConfiguration) -> Void = { _ in },
        prepare: @escaping @Sendable (LinkEndpoint) -> Void = { _ in }
    ) async throws {
        var configuration = LinkConfiguration(role: role)
        configure(&configuration)
        loop = try EventLoop(name: uniqueLoopName(role.description))
        let directory = try LinkStateDirectory(root: state) { try SecureRandom.bytes(count: 16) }
        endpoint = try LinkEndpoint(
            configuration: configuration, state: directory, pairingKey: key, address: address, loop: loop, seed: 7)
        answer = AnswerBox(messageAnswer)
        let endpoint = self.endpoint
        let notifications = self.notifications
        let answer = self.answer
        port = try await loop.submit {
            endpoint.onNotification = { notification in
                notifications.record(notification)
                if case .messageReceived(let id, let payload, let wantsReply) = notification,
                    let reply = answer.value.withLock({ $0 })
                {
                    if case .reply = reply, wantsReply {
                        endpoint.answerMessage(id: id, .reply(payload))
                    } else {
                        endpoint.answerMessage(id: id, reply)
                    }
                }
            }
            prepare(endpoint)
            return try endpoint.start()
        }
    }

    /// Runs `work` with the endpoint on its loop.
    func on<Value: Sendable>(_ work: @escaping @Sendable (LinkEndpoint) throws -> Value) async throws -> Value {
        let endpoint = self.endpoint
        return try await loop.submit { try work(endpoint) }
    }

    /// Sends a message and waits for its one outcome.
    func send(_ payload: [UInt8], wantsReply: Bool = true) async -> MessageOutcome {
        let endpoint = self.endpoint
        return await withCheckedContinuation { continuation in
            loop.execute {
                endpoint.sendMessage(payload, wantsReply: wantsReply) { continuation.resume(returning: $0) }
            }
        }
    }

    /// Waits until the endpoint reports being linked (or not).
    func waitUntil(linked: Bool) async throws {
        var status: LinkStatus?
        try await pollUntil(timeout: hangGuard, every: .milliseconds(5)) {
            status = try await on { $0.status() }
            return status?.linked == linked
        } expired: {
            // What the endpoint saw, so a failure on a loaded machine says why it never (un)linked.
            let lastNotifications = notifications.values.suffix(8).map { "\($0)" }.joined(separator: "; ")
            return HangGuardExpired(
                waitingFor: "linked == \(linked); status \(status.map { "\($0)" } ?? "none"); "
                    + "last notifications: \(lastNotifications)",
                recorded: notifications.values.count)
        }
    }

    /// Stops the endpoint and its loop (the process "exits").
    func shutdown() {
        let endpoint = self.endpoint
        loop.execute { endpoint.stop() }
        loop.shutdown()
    }
}

/// A hand-driven link client over a blocking socket, for peers that misbehave on purpose.
final class RawLinkClient {
    let socket: RawSocket
    var decoder = FrameDecoder()

    init(port: UInt16) throws {
        socket = try RawSocket()
        var timeout = timeval(tv_sec: 15, tv_usec: 0)  // a hang guard, not an assertion
        setsockopt(socket.descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        try socket.connectLoopback(port: port)
    }

    func send(_ bytes: [UInt8]) {
        _ = bytes.withUnsafeBytes { Glibc.send(socket.descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
    }

    func send(_ frame: LinkFrame) { send(frame.encoded()) }

    /// The next frame, or nil at end of stream.
    func readFrame() throws -> LinkFrame? {
        while true {
            if let frame = try decoder.nextFrame() { return frame }
            var buffer = [UInt8](repeating: 0, count: 4096)
            let count = buffer.withUnsafeMutableBytes { recv(socket.descriptor, $0.baseAddress, $0.count, 0) }
            guard count > 0 else { return nil }
            decoder.feed(buffer[..<count])
        }
    }

    /// Reads frames until the peer closes; returns them all.
    func readUntilClosed() throws -> [LinkFrame] {
        var frames: [LinkFrame] = []
        while let frame = try readFrame() { frames.append(frame) }
        return frames
    }
}
