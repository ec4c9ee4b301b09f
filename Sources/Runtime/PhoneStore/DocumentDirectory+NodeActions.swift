import DurableFiles
import Foundation
import LinkProtocol
import Nodes
import POSIX
import WorkoutModel

// The phone node's store actions carried out on the document directory (phoned's I/O thread).

extension DocumentDirectory {
    /// One of the node's store writes: the document directory's and the state directory's files
    /// (`inboxPath`: where the link keeps a received file, `FileTransferStore.inboxPath`). Runs on
    /// the shell's I/O thread.
    package func perform(
        _ write: PhoneNode.StoreWrite, stateDirectory: String, inboxPath: (TransferKey) -> String
    ) throws {
        switch write {
        case .writeSplit(let split):
            try self.write(split)
        case .removeSplitFile(let id):
            _ = try removeSplit(id: id)
        case .writeWorkout(let run):
            try self.write(run)
        case .publishWorkout(let id, let startedAt):
            publish(workout: id, startedAt: startedAt)
        case .removeWorkoutFile(let id, let startedAt):
            _ = try removeWorkout(id: id, startedAt: startedAt)
        case .writeTombstone(let stub):
            try self.write(stub)
        case .persistSettings(let settings):
            try AtomicFile.write(DocumentCoder.encodeForDisk(settings), to: "\(stateDirectory)/settings.json")
        case .persistEpoch(let epoch):
            try writeEpoch(epoch)
            try AtomicFile.write(
                DocumentCoder.encodeForDisk(PhoneEpochRecord(epoch)), to: "\(stateDirectory)/epoch.json")
        case .persistComplicationBudget(let budget):
            try AtomicFile.write(
                DocumentCoder.encodeForDisk(budget), to: "\(stateDirectory)/complication-budget.json")
        case .writeSamples(let key, let runID, let startedAt):
            let path = inboxPath(key)
            guard let bytes = try AtomicFile.read(path) else {
                throw StateFileError.malformed(file: path, reason: "gone")
            }
            try writeSamples(bytes, id: runID, startedAt: startedAt)
        case .removeSamples(let id, let startedAt):
            try removeSamples(id: id, startedAt: startedAt)
        case .moveSamples(let id, let from, let to):
            if let bytes = try AtomicFile.read("\(root)/\(relativePath(ofSamples: id, startedAt: from))") {
                try writeSamples(bytes, id: id, startedAt: to)
                try removeSamples(id: id, startedAt: from)
            }
        }
    }

    /// The runs and samples files the node asked for, each as read or why it could not be.
    package func read(_ needs: NeedsReads) -> Reads {
        var reads = Reads()
        for (id, startedAt) in needs.samples {
            reads.samples[id] = .some(
                samplesSize(id: id, startedAt: startedAt).map {
                    SamplesFile(path: relativePath(ofSamples: id, startedAt: startedAt), bytes: $0)
                })
        }
        for (id, startedAt) in needs.documents {
            reads.documents[id] = Result { () throws(DocumentStoreError) in
                try loadWorkout(id: id, startedAt: startedAt)
            }
            .mapError { ReadFailure($0.description) }
        }
        return reads
    }
}

extension PhoneNode.SkippedFile {
    package init(_ entry: SkippedEntry) { self.init(path: entry.path, reason: entry.reason.description) }
}

extension DocumentDirectory {
    /// phoned's initial gather: every document goes to the node as `events`, reading the run index
    /// at `indexPath` so month folders unchanged since it was recorded are not decoded again. An
    /// index that cannot be used is only a slower start, noted as `runIndexNoted`. Returns the
    /// gather's report and the write of the fresh index, to run off the loop (at a million runs it
    /// is 80 MB), which returns the event to post when it is done.
    package func gather(
        indexAt indexPath: String, progress: ScanProgress, _ events: (PhoneNode.Event) -> Void
    ) throws(DocumentStoreError) -> (report: ScanReport, writeIndex: @Sendable () -> PhoneNode.Event) {
        var previous: RunIndexSnapshot?
        do {
            previous = try RunIndexFile.read(at: indexPath, root: root)
        } catch {
            events(.runIndexNoted("unusable, rebuilt from the documents: \(error.reason)", rebuilt: true))
        }
        let scan = try scan(
            reusing: previous, progress: progress, { events(.documentScanned($0)) },
            recorded: { events(.runTableScanned($0)) })
        if previous != nil { events(.runIndexNoted(scan.description, rebuilt: false)) }
        return (scan.report, { [snapshot = scan.snapshot] in RunIndexFile.writeAfterGather(snapshot, to: indexPath) })
    }
}

extension RunIndexFile {
    /// Runs `write` (the gather's) on a thread of its own and posts its event on `loop`; then the
    /// gather's buffers (and, once the node has taken the written table, what it decoded), free but
    /// kept by glibc, go back to the system. Returns the thread, for a graceful stop to wait for.
    package static func writeInBackground(
        _ write: @escaping @Sendable () -> PhoneNode.Event, loop: EventLoop,
        post: @escaping @Sendable (PhoneNode.Event) -> Void
    ) -> SystemThread? {
        do {
            return try SystemThread.start {
                let written = write()
                loop.execute {
                    post(written)
                    CurrentProcess.releaseFreeMemory()
                }
            }
        } catch {
            post(.runIndexNoted("not written (\(error)); the next start reads every document", rebuilt: true))
            return nil
        }
    }

    /// Records the gather's snapshot for the next start and reads it back mapped: the node then
    /// takes its table as the recorded runs (`runTableWritten`), so what a first start decoded
    /// leaves memory. Or why the index was not written (`runIndexNoted`).
    package static func writeAfterGather(_ snapshot: RunIndexSnapshot, to path: String) -> PhoneNode.Event {
        do {
            try write(snapshot, to: path)
        } catch {
            return .runIndexNoted("not written (\(error)); the next start reads every document", rebuilt: true)
        }
        do {
            guard let written = try read(at: path, root: snapshot.root) else {
                return .runIndexNoted("written, then gone before it was read back", rebuilt: true)
            }
            return .runTableWritten(written.table)
        } catch {
            return .runIndexNoted("written, then unreadable: \(error.reason)", rebuilt: true)
        }
    }
}
