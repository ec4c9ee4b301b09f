import WorkoutModel

/// The watch's workout session (the `HKWorkoutSession` analog that keeps the watch app in the
/// foreground for the length of a run).
///
/// - `idle`: no session. → `running` on a start.
/// - `running`: a session holds a run; a start for another run is covered by it. When the run is
///   completed (finished and saved) or gone (discarded), it goes on for another active run if there
///   is one; → `ended` when there is none, or the system ends it.
/// - `ended`: the session is over and says why. → `idle` on clear; → `running` on the next start,
///   which clears the previous outcome implicitly (there is only ever one session).
package enum SessionState: Codable, Equatable, Sendable {
    case idle
    case running(RunningSession)
    case ended(EndedSession)

    /// The run the session is (or was) for, if any.
    package var runID: DocumentID? {
        switch self {
        case .idle: return nil
        case .running(let session): return session.runID
        case .ended(let session): return session.runID
        }
    }
}

/// Who asked for the session.
package enum SessionOrigin: String, Codable, Equatable, Sendable {
    /// The phone's launch request (HealthKit `startWatchApp`, S1).
    case phoneLaunch
    /// A person started the run's session on the watch.
    case watch
}

/// A running session.
package struct RunningSession: Codable, Equatable, Sendable {
    package var runID: DocumentID
    package var startedAt: Timestamp
    package var origin: SessionOrigin
    /// Whether the run has been in the cache since the session started. A launch can beat the context
    /// that carries its run (S1), so until the run is seen its absence means "not arrived yet"; only a
    /// context received from the phone after the start can then show it was discarded.
    package var runSeen: Bool

    package init(runID: DocumentID, startedAt: Timestamp, origin: SessionOrigin, runSeen: Bool) {
        self.runID = runID
        self.startedAt = startedAt
        self.origin = origin
        self.runSeen = runSeen
    }
}

/// A session that is over, and why.
package struct EndedSession: Codable, Equatable, Sendable {
    package var runID: DocumentID
    package var startedAt: Timestamp
    package var endedAt: Timestamp
    package var outcome: SessionOutcome

    package init(runID: DocumentID, startedAt: Timestamp, endedAt: Timestamp, outcome: SessionOutcome) {
        self.runID = runID
        self.startedAt = startedAt
        self.endedAt = endedAt
        self.outcome = outcome
    }
}

/// What ended a session.
package enum SessionOutcome: Codable, Equatable, Sendable {
    /// The run completed (on either device, or ended early keeping progress): metrics were recorded on
    /// the run and sent to the phone.
    case finishedAndSaved(metrics: SessionMetrics)
    /// The run left the authoritative state (discarded or deleted on the phone): nothing saved or sent.
    case discarded
    /// The system ended the session (the `didFailWithError` / `.stopped` analog).
    case systemFailure(reason: String)
}

/// The session state as the shell stores it (`session.json` in watchd's state directory) and feeds
/// back at start-up, so a restart knows a session was running. Written with `DocumentCoder`.
///
/// JSON, version 1 (synthesised enum coding), e.g. a running session:
///
/// ```
/// {"schemaVersion":1,
///  "state":{"running":{"_0":{"origin":"phoneLaunch","runID":"…","runSeen":true,"startedAt":"…"}}}}
/// ```
package struct SessionRecord: VersionedDocument {
    package static let currentSchemaVersion = 1

    package var schemaVersion: Int
    package var state: SessionState

    package init(_ state: SessionState) {
        schemaVersion = Self.currentSchemaVersion
        self.state = state
    }
}
