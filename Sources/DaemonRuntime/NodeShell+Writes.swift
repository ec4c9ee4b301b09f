import Foundation
import LinkProtocol
import LinkRuntime
import Nodes

// MARK: The write queue: durable writes off the loop, in order

extension NodeShell {
    /// The durable write `action` stands for, to run on the write queue; nil for any other action.
    func durableWrite(_ action: LinkedNode<Node>.Action) -> (@Sendable () throws -> Void)? {
        switch action {
        case .inner(let action):
            return durableWrite(action)
        case .link(let action, _):
            guard let (what, write) = link.stateWrite(action) else { return nil }
            return {
                do { try write() } catch { throw StateWriteFailure(description: "\(what) failed: \(error)") }
            }
        case .messageAttempt, .appendsRenumbered, .resume:
            return nil
        }
    }

    func durableWrite(_ action: Node.Action) -> (@Sendable () throws -> Void)? {
        guard let shared = Node.nodeAction(action) else { return storeWrite(action) }
        guard shared.isDurableWrite else { return nil }
        switch shared {
        case .persistClock(let stamp):
            return clockFile.write(stamp)
        case .persistLiveVersion(let version):
            let (path, logger) = ("\(stateDirectory)/live-version", logger)
            return {
                do {
                    try AtomicFile.write(Array("\(version)".utf8), to: path)
                } catch {
                    logger.warning("live version not persisted", ["reason": "\(error)"], component: "live")
                }
            }
        case .markStoppedCleanly:
            let (state, logger) = (link.state, logger)
            return {
                do { try state.markStoppedCleanly() } catch {
                    logger.warning("clean stop not marked", ["reason": "\(error)"], component: "link")
                }
            }
        case .link(.keepReceivedFile(let key, let name)):
            let (source, directory) = (link.inboxPath(for: key), "\(stateDirectory)/received-files")
            return {
                try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
                try AtomicFile.moveDurably(source, to: "\(directory)/\(name)")
            }
        default:
            preconditionFailure("\(shared) is a durable write with no work for the write queue")
        }
    }

    /// Runs `write` after the writes sent before it; the actions waiting for it follow once it lands.
    @_specialize(where Node == PhoneNode)
    @_specialize(where Node == WatchNode)
    func send(_ write: @escaping @Sendable () throws -> Void) {
        if writesLanded == writesSent { busySince = ContinuousClock.now }
        writesSent += 1
        let number = writesSent
        writes.async { [self] in
            guard !writeFailed.load(ordering: .acquiring) else { return }
            let result = Result { try write() }
            loop.execute { [self] in landed(number, result) }
        }
    }

    @_specialize(where Node == PhoneNode)
    @_specialize(where Node == WatchNode)
    func landed(_ number: UInt64, _ result: Result<Void, any Error>) {
        guard !writeFailed.load(ordering: .acquiring) else { return }
        writesLanded = number
        if case .failure(let error) = result {
            failed(error)
            drain()
            return
        }
        // As in `drain`: what these actions raise waits until they are all carried out.
        draining = true
        while let first = waiting.first, first.after <= writesLanded {
            waiting.removeFirst()
            guard carryOut(first.action) else { break }
        }
        draining = false
        // The held link events are handled before a waiting end of turn (`drain`): its batch takes them in.
        linkBacklog += hold.landed(through: writesLanded)
        pauseReadingIfBehind()
        drain()
    }
}

/// A link state write that failed, named.
struct StateWriteFailure: Error, CustomStringConvertible {
    var description: String
}
