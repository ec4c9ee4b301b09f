import LinkProtocol
import WorkoutModel

/// What a node must read before it can handle an event (a run only summarised in memory, the
/// outbox's listing): thrown before the node changes anything, so the shell reads and feeds the same
/// event again with the reads.
package struct NeedsReads: Error, Equatable, Sendable {
    package var documents: [DocumentID: Timestamp] = [:]
    package var outstandingTransfers = false
    package var outstandingFiles = false
    /// Runs whose exported samples file (`<id>.samples` next to the document) to look up.
    package var samples: [DocumentID: Timestamp] = [:]

    package init(
        documents: [DocumentID: Timestamp] = [:], outstandingTransfers: Bool = false, outstandingFiles: Bool = false,
        samples: [DocumentID: Timestamp] = [:]
    ) {
        self.documents = documents
        self.outstandingTransfers = outstandingTransfers
        self.outstandingFiles = outstandingFiles
        self.samples = samples
    }
}

/// What the shell read for a `NeedsReads`.
package struct Reads: Sendable {
    package var documents: [DocumentID: Result<WorkoutDocument, ReadFailure>] = [:]
    package var outstandingTransfers: [OutstandingTransfer]?
    package var outstandingFiles: [OutboundFile]?
    /// Each looked-up run's samples file: its path relative to the document directory and size, or
    /// nil when the run has none.
    package var samples: [DocumentID: SamplesFile?] = [:]

    package init(
        documents: [DocumentID: Result<WorkoutDocument, ReadFailure>] = [:],
        outstandingTransfers: [OutstandingTransfer]? = nil, outstandingFiles: [OutboundFile]? = nil,
        samples: [DocumentID: SamplesFile?] = [:]
    ) {
        self.documents = documents
        self.outstandingTransfers = outstandingTransfers
        self.outstandingFiles = outstandingFiles
        self.samples = samples
    }

    /// The run as read, its read failure, or `NeedsReads` when it was not read yet.
    package func workout(_ id: DocumentID, startedAt: Timestamp) throws -> WorkoutDocument {
        guard let result = documents[id] else { throw NeedsReads(documents: [id: startedAt]) }
        return try result.get()
    }

    /// Every run of `wanted`, asking for all the missing ones at once.
    package func workouts(_ wanted: [(id: DocumentID, startedAt: Timestamp)]) throws -> [DocumentID: WorkoutDocument] {
        let missing = wanted.filter { documents[$0.id] == nil }
        if !missing.isEmpty {
            throw NeedsReads(
                documents: Dictionary(missing.map { ($0.id, $0.startedAt) }, uniquingKeysWith: { a, _ in a }))
        }
        var runs: [DocumentID: WorkoutDocument] = [:]
        for (id, startedAt) in wanted { runs[id] = try workout(id, startedAt: startedAt) }
        return runs
    }
}

/// Why a document could not be read (its description is what a person sees).
package struct ReadFailure: Error, Equatable, Sendable, CustomStringConvertible {
    package var description: String
    package init(_ description: String) { self.description = description }
}

/// A run's exported samples file on the phone: where it is (relative to the document directory)
/// and how big.
package struct SamplesFile: Codable, Equatable, Sendable {
    package var path: String
    package var bytes: Int
    package init(path: String, bytes: Int) {
        self.path = path
        self.bytes = bytes
    }
}
