import DurableFiles
import Foundation
import LinkProtocol
import LinkRuntime
import Nodes

// MARK: The write queue: durable writes off the loop, in order

extension NodeShell {
    /// The durable write `action` stands for, to run on the write queue; nil for any other action.
    private func durableWrite(_ action: LinkedNode<Node>.Action) -> (@Sendable () throws -> Void)? {
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

    private func durableWrite(_ action: Node.Action) -> (@Sendable () throws -> Void)? {
        guard let shared = Node.nodeAction(action) else { return daemon.storeWrite(action) }
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
            let source = link.inboxPath(for: key)
            let folder = ReceivedFilesFolder(
                path: "\(stateDirectory)/received-files",
                quota: ReceivedFilesQuota(maximumBytes: receivedFilesQuotaBytes),
                logger: logger)
            return { try folder.keep(source, as: name) }
        default:
            preconditionFailure("\(shared) is a durable write with no work for the write queue")
        }
    }

    /// Runs write `number` on the write queue after the ones before it; the runner hears when it lands.
    @_specialize(where Node == PhoneNode)
    @_specialize(where Node == WatchNode)
    package func beginWrite(_ number: UInt64, _ action: LinkedNode<Node>.Action) {
        guard let write = durableWrite(action) else {
            preconditionFailure("\(action) is a durable write with no work for the write queue")
        }
        writes.async { [self] in
            guard !writeFailed.load(ordering: .acquiring) else { return }
            let failure: String?
            do {
                try write()
                failure = nil
            } catch {
                writeFailed.store(true, ordering: .releasing)
                failure = "\(error)"
            }
            loop.execute { [self] in runner.landed(through: number, failure: failure) }
        }
    }
}

/// A link state write that failed, named.
struct StateWriteFailure: Error, CustomStringConvertible {
    var description: String
}
