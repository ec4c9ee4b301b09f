import POSIX
import WorkoutModel

/// A run's exported heart-rate samples (`WorkoutSamples`), kept next to its document as
/// `Workouts/<YYYY>/<MM>/<id>.samples`: a companion file the scan and the watcher pass over
/// (never a document, never a stray), written atomically, removed with the run.
extension DocumentDirectory {
    /// `Workouts/<YYYY>/<MM>/<id>.samples`, relative to the root.
    package func relativePath(ofSamples id: DocumentID, startedAt: Timestamp) -> String {
        DocumentFolder.month(of: startedAt).relativePath(of: "\(id.rawValue)\(DocumentFolder.samplesSuffix)")
    }

    /// Writes a run's samples atomically into its start month's folder.
    package func writeSamples(_ bytes: [UInt8], id: DocumentID, startedAt: Timestamp) throws(DocumentStoreError) {
        try writeCompanion(bytes, at: relativePath(ofSamples: id, startedAt: startedAt), startedAt: startedAt)
    }

    /// Removes a run's samples durably; false when it had none.
    @discardableResult
    package func removeSamples(id: DocumentID, startedAt: Timestamp) throws(DocumentStoreError) -> Bool {
        try removeCompanion("\(root)/\(relativePath(ofSamples: id, startedAt: startedAt))", startedAt: startedAt)
    }

    /// The size of a run's samples file, or nil when it has none.
    package func samplesSize(id: DocumentID, startedAt: Timestamp) -> Int? {
        let path = "\(root)/\(relativePath(ofSamples: id, startedAt: startedAt))"
        guard let status = try? FileStatus(of: path, followingLinks: false), status.kind == .regularFile else {
            return nil
        }
        return status.size
    }
}
