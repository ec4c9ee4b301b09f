// linkpeer: one bare link endpoint, for the link's process-level tests and for poking at the
// protocol by hand. It queues numbered transfers, records every transfer it applies (once, in an
// fsynced file), echoes messages and prints one line per event on stdout.
import Foundation
import Glibc
import LinkProtocol
import LinkRuntime
import POSIX

let usage = """
    Usage: linkpeer --role phone|watch --state DIR --key FILE (--listen HOST:PORT | --connect HOST:PORT)
                    [--enqueue N] [--applied FILE] [--crash-after-apply SEQ] [--context TEXT]...
                    [--message TEXT]...
      --enqueue N            queue N transfers ("transfer-1" ...), one after another, printing
                             "enqueued seq=S" once each is on disk
      --applied FILE         append "<queue> <seq> <payload>" to FILE (fsynced) for each transfer
                             applied; a transfer already in FILE is not applied again
      --crash-after-apply S  kill -9 this process right after applying sequence S, before the ack
      --context TEXT         (phone) update the application context to TEXT at start; repeatable
      --message TEXT         send TEXT as a message wanting a reply when reachable, printing
                             "message-outcome ..." with the reply or the error; repeatable
    """

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("Error: \(message)\n\(usage)\n".utf8))
    exit(64)
}

func output(_ line: String) {
    FileHandle.standardOutput.write(Data("\(line)\n".utf8))
}

struct Options: Sendable {
    var role: LinkRole?
    var state: String?
    var key: String?
    var address: LinkEndpoint.Address?
    var enqueue = 0
    var applied: String?
    var crashAfterApply: UInt64?
    var contexts: [String] = []
    var messages: [String] = []
}

func hostAndPort(_ text: String) -> (String, UInt16) {
    guard let colon = text.lastIndex(of: ":"), let port = UInt16(text[text.index(after: colon)...]) else {
        fail("expected HOST:PORT, got \(text.debugDescription)")
    }
    return (String(text[..<colon]), port)
}

var options = Options()
var arguments = CommandLine.arguments.dropFirst()
while let argument = arguments.popFirst() {
    func value() -> String {
        guard let next = arguments.popFirst() else { fail("\(argument) needs a value") }
        return next
    }
    switch argument {
    case "-h", "--help":
        output(usage)
        exit(0)
    case "--role":
        let text = value()
        guard let role = ["phone": LinkRole.phone, "watch": .watch][text] else { fail("unknown role \(text)") }
        options.role = role
    case "--state": options.state = value()
    case "--key": options.key = value()
    case "--listen":
        let (host, port) = hostAndPort(value())
        options.address = .listen(host: host, port: port)
    case "--connect":
        let (host, port) = hostAndPort(value())
        options.address = .dial(host: host, port: port)
    case "--enqueue":
        guard let count = Int(value()), count >= 0 else { fail("--enqueue needs a count") }
        options.enqueue = count
    case "--applied": options.applied = value()
    case "--crash-after-apply":
        guard let sequence = UInt64(value()) else { fail("--crash-after-apply needs a sequence") }
        options.crashAfterApply = sequence
    case "--context": options.contexts.append(value())
    case "--message": options.messages.append(value())
    default: fail("unknown argument \(argument)")
    }
}
guard let role = options.role, let statePath = options.state, let keyPath = options.key,
    let address = options.address
else { fail("--role, --state, --key and --listen/--connect are required") }

/// The receiving app's durable record of applied transfers; applying is idempotent by (queue, seq).
final class AppliedLog: @unchecked Sendable {
    // @unchecked: used only on the event loop thread.
    let descriptor: Int32
    var applied: Set<String>

    init(path: String) throws {
        let existing = (try? String(contentsOfFile: path, encoding: .utf8)) ?? ""
        applied = Set(existing.split(separator: "\n").map { $0.split(separator: " ").prefix(2).joined(separator: " ") })
        descriptor = open(path, O_WRONLY | O_CREAT | O_APPEND, 0o600)
        guard descriptor >= 0 else { throw SystemCallError(call: "open", errno: errno, path: path) }
    }

    /// Appends the transfer unless already applied; returns whether it was new.
    func apply(_ key: TransferKey, payload: [UInt8]) throws -> Bool {
        let id = "\(key.queue) \(key.sequence)"
        guard !applied.contains(id) else { return false }
        let line = Array("\(id) \(String(decoding: payload, as: UTF8.self))\n".utf8)
        guard write(descriptor, line, line.count) == line.count, fdatasync(descriptor) == 0 else {
            throw SystemCallError(call: "write", errno: errno)
        }
        applied.insert(id)
        return true
    }
}

/// The peer: one endpoint and what it does with each notification. Everything runs on the loop.
final class LinkPeer: @unchecked Sendable {
    // @unchecked: after init, every member is used only on the endpoint's event loop thread.
    let endpoint: LinkEndpoint
    let appliedLog: AppliedLog?
    let options: Options

    init(_ options: Options, role: LinkRole, statePath: String, keyPath: String, address: LinkEndpoint.Address) throws {
        self.options = options
        let key = try PairingKeyFile.load(keyPath)
        let state = try LinkStateDirectory(root: statePath) { try SecureRandom.bytes(count: 16) }
        let loop = try EventLoop(name: "linkpeer")
        endpoint = try LinkEndpoint(
            configuration: LinkConfiguration(role: role), state: state, pairingKey: key, address: address, loop: loop,
            seed: UInt64(truncatingIfNeeded: getpid()))
        appliedLog = try options.applied.map { try AppliedLog(path: $0) }
    }

    func enqueue(_ index: Int, of count: Int) {
        guard index <= count else { return }
        endpoint.transferUserInfo(Array("transfer-\(index)".utf8)) { result in
            switch result {
            case .success(let sequence):
                output("enqueued seq=\(sequence) payload=transfer-\(index)")
                self.enqueue(index + 1, of: count)
            case .failure(let error):
                output("enqueue failed: \(error)")
            }
        }
    }

    func received(_ notification: LinkNotification) {
        switch notification {
        case .linkEstablished(let peer):
            output("linked peer=\(peer)")
        case .reachabilityChanged(true):
            // Messages need the peer reachable (towards the watch: its app in the foreground).
            for text in options.messages {
                endpoint.sendMessage(Array(text.utf8), wantsReply: true) { outcome in
                    switch outcome {
                    case .replied(let reply):
                        output("message-outcome replied \(String(decoding: reply, as: UTF8.self))")
                    case .delivered: output("message-outcome delivered")
                    case .failed(let error): output("message-outcome failed \(error)")
                    }
                }
            }
        case .linkLost(let reason):
            output("unlinked reason=\(reason)")
        case .contextReceived(let context):
            output(
                "context generation=\(context.generation) payload=\(String(decoding: context.payload, as: UTF8.self))")
        case .userInfoReceived(let key, let payload):
            do {
                let fresh = try appliedLog?.apply(key, payload: payload) ?? true
                output("\(fresh ? "applied" : "already-applied") seq=\(key.sequence)")
            } catch {
                output("apply failed: \(error)")
                return
            }
            if options.crashAfterApply == key.sequence { kill(getpid(), SIGKILL) }
            endpoint.transferProcessed(key)
        case .transferFinished(let sequence, _):
            output("finished seq=\(sequence)")
        case .transferFailed(let sequence, _, _, let error):
            output("failed seq=\(sequence) \(error)")
        case .messageReceived(let id, let payload, _), .messageDataReceived(let id, let payload, _):
            endpoint.answerMessage(id: id, .reply(payload))
        case .launchReceived:
            output("launch")
        default:
            break
        }
    }

    /// Starts the endpoint on its loop: prints the readiness line, applies `--context`, queues `--enqueue`.
    func start(role: LinkRole) {
        endpoint.loop.execute {
            self.endpoint.log = { output("log \($0)") }
            self.endpoint.onNotification = { self.received($0) }
            do {
                let port = try self.endpoint.start()
                output("ready role=\(role) port=\(port ?? 0) instance=\(self.endpoint.state.instance)")
                for text in self.options.contexts {
                    try self.endpoint.updateApplicationContext(Array(text.utf8))
                    output("context-updated payload=\(text)")
                }
                self.enqueue(1, of: self.options.enqueue)
            } catch {
                FileHandle.standardError.write(Data("Error: \(error)\n".utf8))
                exit(1)
            }
        }
    }

    func stop() {
        endpoint.loop.execute { self.endpoint.stop() }
        endpoint.loop.shutdown()
    }
}

ignoreSIGPIPE()
// SIGTERM and SIGINT are blocked before any other thread exists, so every thread inherits the mask,
// and the main thread takes them with sigwait. (Not a Dispatch signal source: on Linux it reads a
// signalfd, while after dispatchMain() the main thread waits in sigsuspend with nothing blocked and
// can take the signal first; the source then never fires and the peer ignores the SIGTERM.)
var stopSignals = sigset_t()
sigemptyset(&stopSignals)
sigaddset(&stopSignals, SIGTERM)
sigaddset(&stopSignals, SIGINT)
pthread_sigmask(SIG_BLOCK, &stopSignals, nil)
let peer: LinkPeer
do {
    peer = try LinkPeer(options, role: role, statePath: statePath, keyPath: keyPath, address: address)
} catch {
    FileHandle.standardError.write(Data("Error: \(error)\n".utf8))
    exit(1)
}
peer.start(role: role)
var received: Int32 = 0
while sigwait(&stopSignals, &received) != 0 {}
peer.stop()
exit(0)
