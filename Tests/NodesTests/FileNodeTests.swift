import AdminCommands
import LinkProtocol
import Nodes
import Testing
import WorkoutModel

/// `watchctl export` and what the phone node does with the file, back to back (`NodePair`).
@Suite("Files between the nodes")
struct FileNodeTests {
    @Test("export: the phone keeps the run's samples next to it and show reports them; discard removes them")
    func export() throws {
        var (pair, run) = try BackToBackTests.started()
        let reply = pair.watchctl(.export(run: run))
        #expect(reply.status == .ok, "\(reply)")
        #expect(pair.phoneSamples[run] == WorkoutSamples.series(for: run))
        #expect(pair.inbox.isEmpty, "processed: nothing left in the inbox")
        let received = pair.phone.fileTransfers.received
        #expect(received.count == 1 && received.first?.storedAs?.hasSuffix("/\(run.rawValue).samples") == true)
        #expect(pair.watch.fileTransfers.finished == 1)
        pair.phonectl(.discard(run: run))
        #expect(pair.phoneSamples[run] == nil)
    }

    @Test("export of a run the watch does not have is refused; samples of a run the phone does not have are dropped")
    func unknownRuns() throws {
        var (pair, _) = try BackToBackTests.started()
        let unknown = DocumentID(bytes: [UInt8](repeating: 0x42, count: 16))
        #expect(pair.watchctl(.export(run: unknown)).status == .refused)
        let metadata = String(
            decoding: DocumentCoder.encodeCompact(WorkoutSamplesMetadata(runID: unknown, samples: 1)), as: UTF8.self)
        let key = TransferKey(queue: NodePair.watchInstance, sequence: 99)
        pair.deliver(.phone(.link(.fileReceived(ReceivedFile(key: key, size: 1, metadata: metadata)))))
        #expect(pair.phoneSamples[unknown] == nil)
        #expect(pair.phone.fileTransfers.received.last?.storedAs == nil)
    }
}
