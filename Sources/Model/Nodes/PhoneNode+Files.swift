import AdminCommands
import LinkProtocol
import WorkoutModel

/// `show RUN` of a run with its samples file: the document as stored, plus `samples` when the run
/// has one (decoders of the document ignore the extra key).
struct ShownRun: Encodable {
    var run: WorkoutDocument
    var samples: SamplesFile?

    private enum Key: String, CodingKey { case samples }

    func encode(to encoder: any Encoder) throws {
        try run.encode(to: encoder)
        var container = encoder.container(keyedBy: Key.self)
        try container.encodeIfPresent(samples, forKey: .samples)
    }
}

extension PhoneNode {
    /// A file from the watch: a run's exported samples are kept next to the run
    /// (`Workouts/YYYY/MM/<id>.samples`, replacing an earlier export); samples of a run the phone
    /// does not have (discarded, never synced) are left in the inbox, so dropped; any other file is
    /// kept in `<state>/received-files`.
    mutating func fileReceived(_ file: ReceivedFile, now: Timestamp, into out: inout Output) {
        let storedAs: String?
        if let samples = try? DocumentCoder.decode(WorkoutSamplesMetadata.self, from: Array(file.metadata.utf8)) {
            if let summary = engine.index[samples.runID] {
                out.actions.append(.store(.writeSamples(file.key, runID: samples.runID, startedAt: summary.startedAt)))
                storedAs = Self.samplesPath(samples.runID, startedAt: summary.startedAt)
            } else {
                out.log(
                    .notice, "file", "samples of a run the phone does not have dropped", [("run", "\(samples.runID)")])
                storedAs = nil
            }
        } else {
            let name = FileTransfers.keptName(file.key)
            out.node(.link(.keepReceivedFile(file.key, name: name)))
            storedAs = "received-files/\(name)"
        }
        out.node(fileTransfers.received(file, storedAs: storedAs, now: now))
    }

    /// `show` of a run: its document and, when it has one, its samples file.
    func shown(_ run: WorkoutDocument, reads: Reads) throws(NeedsReads) -> AdminOutcome {
        guard let samples = reads.samples[run.id] else { throw NeedsReads(samples: [run.id: run.startedAt]) }
        var text = describe(run)
        if let samples { text += "\nsamples: \(samples.path) (\(samples.bytes) bytes)" }
        return .output(text: text, json: AdminOutcome.json(ShownRun(run: run, samples: samples)))
    }

    /// `Workouts/<YYYY>/<MM>/<id>.samples` (UTC year and month of the start), relative to the documents.
    static func samplesPath(_ id: DocumentID, startedAt: Timestamp) -> String {
        let (year, month) = startedAt.yearAndMonth
        return "Workouts/\(year)/\(month < 10 ? "0" : "")\(month)/\(id.rawValue).samples"
    }
}
