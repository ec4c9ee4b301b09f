import WorkoutModel

/// The watch's pure decision core: the cache and its applier, optimistic edits and how they are
/// forwarded, the cold-launch sync request, and the workout-session coordinator, behind one
/// `handle(_:) -> [Action]`.
///
/// The shell (watchd) MUST:
/// - at start-up, build the engine from its cache files (`WatchCache(restoringWorkouts:splits:)`) and
///   the last `SessionRecord`, then feed `started` with the persisted last context (or nil) before
///   any other event;
/// - persist every context that arrives BEFORE feeding `contextReceived` (the link does this), so
///   the next start-up re-applies it;
/// - perform actions in order: `persistWorkout`/`persistSplit` make the document durable (watchd
///   keeps a run in its pending record, then replaces its file; see docs/PROTOCOL.md, "On disk"),
///   `deleteWorkout`/`deleteSplit` remove it, `persistSession` writes the record atomically;
/// - for `sendMessage`, send over the link's message channel (mapping the token to its own message
///   ID) and report exactly one `messageDelivered` or `messageSendFailed` per token; for
///   `transferUserInfo`, hand the payload to the durable transfer outbox;
/// - feed `reachabilityChanged` on every change of the link's reachability;
/// - answer the person who asked on `editRefused` (the edit did not happen).
///
/// Encode payloads with `WatchToPhoneMessage.encoded()`.
package struct WatchEngine: Sendable {
    /// Facts fed into the engine.
    package enum Event: Equatable, Sendable {
        /// watchd started; `lastContext` is the persisted last received context, if any, and
        /// `sender` the phone instance it came from, as persisted with it.
        case started(lastContext: [UInt8]?, sender: String? = nil, now: Timestamp)
        /// The phone became reachable (true) or not (false).
        case reachabilityChanged(Bool)
        /// A context arrived from the phone (already on disk).
        case contextReceived([UInt8], now: Timestamp)
        /// A pushed context, with the phone instance that sent it (a never-seen instance is a wiped
        /// phone and wins even with an older epoch; a retired one never does).
        case contextReceivedFrom(sender: String, [UInt8], now: Timestamp)
        /// The phone asked to launch the watch app for a run; the payload is a `WorkoutLaunchRequest`.
        case launchReceived(payload: [UInt8], now: Timestamp)
        /// A person started the run's workout session on the watch.
        case sessionStartRequested(runID: DocumentID, now: Timestamp)
        /// A person edited a run on the watch.
        case editRequested(WatchEdit, runID: DocumentID, now: Timestamp)
        /// The message sent under this token reached the phone.
        case messageDelivered(MessageToken, now: Timestamp)
        /// The message sent under this token did not reach the phone.
        case messageSendFailed(MessageToken, reason: String)
        /// The system ended the workout session.
        case sessionEndedBySystem(failure: String, now: Timestamp)
        /// The ended session was acknowledged (status shown, person dismissed it).
        case sessionCleared
        /// The link activated for the first time (a fresh or wiped state directory): transfers refused
        /// before with `sessionNotActivated` can go now.
        case linkActivated
        /// The outbox refused a `transferUserInfo` (e.g. `sessionNotActivated`); the edit stays undelivered.
        case transferRefused(WatchToPhoneMessage, reason: String)
        /// A person cancelled this queued transfer (`watchctl queue cancel`).
        case transferCancelled(WatchToPhoneMessage)
        /// The phone durably processed this transfer (didFinish without an error).
        case transferDelivered(WatchToPhoneMessage, now: Timestamp)
    }

    /// What the shell must do, in order.
    package enum Action: Equatable, Sendable {
        /// Write the run's cache file (create or replace).
        case persistWorkout(WorkoutDocument)
        /// Remove the run's cache file.
        case deleteWorkout(DocumentID)
        case persistSplit(SplitDocument)
        case deleteSplit(DocumentID)
        /// Write the session record; fed back to `init` at start-up.
        case persistSession(SessionRecord)
        /// Write the phone epoch the cache now belongs to; fed back to `init` at start-up.
        case persistPhoneEpoch(PhoneEpochRecord)
        /// Send over the message channel (reachable-only); report the outcome under this token.
        case sendMessage(MessageToken, WatchToPhoneMessage)
        /// Queue in the durable transfer outbox (guaranteed, survives restarts, unordered vs messages).
        case transferUserInfo(WatchToPhoneMessage)
        /// Tell the person the edit was refused; the cache did not change.
        case editRefused(runID: DocumentID, EditRefusal)
        /// Bring the watch app to the foreground (a launch from the phone, seed 000 §4).
        case bringAppToForeground
        case log(WatchDiagnostic)
    }

    package internal(set) var cache: WatchCache
    package internal(set) var editor: WatchEditor
    package internal(set) var coordinator: WorkoutSessionCoordinator
    /// Whether the phone is reachable (the link's `isReachable`).
    package internal(set) var isReachable = false
    /// Whether a context from the phone has been applied since this process started (the persisted one
    /// re-applied at start-up does not count).
    package internal(set) var receivedContextSinceStart = false
    /// What the last applied context changed, for status.
    package internal(set) var lastApplied: ContextApplyReport?
    /// Why the last context was skipped, if the last one that arrived was.
    package internal(set) var lastSkipped: DocumentError?
    /// Messages sent and not yet reported delivered or failed.
    package internal(set) var messagesInFlight: [MessageToken: WatchToPhoneMessage] = [:]
    /// Run → `version` (stamp) of the newest copy of it handed to the durable outbox and not refused or
    /// cancelled since (seeded from the outbox at start-up). An undelivered edit already there is not
    /// queued again at start-up or activation, so the outbox does not grow with restarts.
    package internal(set) var queuedTransfers: [DocumentID: Stamp] = [:]
    /// Run → the local `version` sent again because a context left its edit uncovered, with the
    /// pushed copy that did (at most once per both: a phone that refuses it does not get it again
    /// and again).
    var resentUncovered: [DocumentID: UncoveredResend] = [:]
    /// The newest copy of each run the phone is known to have received in this life (a message
    /// answered, a transfer finished): a run absent from a push is held only while its newest local
    /// edit is newer than that (`WatchCacheApplier`).
    package internal(set) var deliveredVersions: [DocumentID: Stamp] = [:]
    /// The last context applied: the phone's own copy of every run it carries, which a cancelled
    /// local edit gives way to.
    package internal(set) var lastContext: ApplicationContext?
    /// The newest phone epoch applied (persisted in the cache directory): a context of an older one
    /// is skipped whole, a newer one replaces the cache wholesale, local edits included.
    package internal(set) var phoneEpoch: Timestamp?
    /// The phone instance whose epoch that is, and the instances newer phones replaced.
    package internal(set) var phoneSender: String?
    package internal(set) var retiredSenders: Set<String> = []
    var nextToken = MessageToken(rawValue: 1)
    /// Decodes arriving contexts, reusing the runs of the last one that did not change and the runs
    /// this watch sent (`sent(_:encodedAs:)`).
    var contextDecoder = ContextDecoder()

    /// How many runs arriving contexts held that had to be decoded (`ContextDecoder.runsDecoded`).
    package var contextRunsDecoded: Int { contextDecoder.runsDecoded }

    /// Notes the bytes this watch sent `run` as (its compact encoding): the push that brings them back
    /// takes `run` without decoding it again.
    package mutating func sent(_ run: WorkoutDocument, encodedAs bytes: [UInt8]) {
        contextDecoder.expect(run, encodedAs: bytes)
    }

    /// Builds the engine from what the shell restored: the cache files, the last session record and
    /// the workout updates still in the durable outbox, and the clock's persisted high-water mark
    /// (persist `editor.clock.last` whenever it moves).
    package init(
        cache: WatchCache = WatchCache(), session: SessionRecord? = nil, queued: [WatchToPhoneMessage] = [],
        phoneEpoch: Timestamp? = nil, clockHighWater: Stamp? = nil, phoneEpochRecord: PhoneEpochRecord? = nil
    ) {
        self.cache = cache
        self.phoneEpoch = phoneEpochRecord?.epoch ?? phoneEpoch
        phoneSender = phoneEpochRecord?.sender
        retiredSenders = Set(phoneEpochRecord?.retiredSenders ?? [])
        editor = WatchEditor(clock: HybridLogicalClock(origin: .watch, highWater: clockHighWater))
        coordinator = WorkoutSessionCoordinator(restoring: session)
        for case .workoutUpdate(let run, let epoch) in queued where epoch == self.phoneEpoch { noteQueued(run) }
    }

    /// The workout session's state, for status.
    package var session: SessionState { coordinator.state }

    /// Handles one event and returns what the shell must do, in order.
    package mutating func handle(_ event: Event) -> [Action] {
        switch event {
        case .started(let lastContext, let sender, let now):
            return started(lastContext: lastContext, sender: sender, now: now)
        case .reachabilityChanged(let reachable):
            let regained = reachable && !isReachable
            isReachable = reachable
            guard regained, !receivedContextSinceStart else { return [] }
            return [.log(.requestingSync)] + send(.requestSync)
        case .contextReceived(let bytes, let now):
            return contextReceived(bytes, now: now)
        case .contextReceivedFrom(let sender, let bytes, let now):
            return contextReceived(bytes, sender: sender, now: now)
        case .launchReceived(let payload, let now):
            let request: WorkoutLaunchRequest
            do throws(DocumentError) {
                request = try DocumentCoder.decode(WorkoutLaunchRequest.self, from: payload)
            } catch {
                return [.log(.launchRequestIgnored(error))]
            }
            // The launch brings the app up; when its run is not here yet (the launch beat the context
            // that carries it, S1), the app asks the phone for its state.
            var actions: [Action] = [.bringAppToForeground]
            actions += startSession(runID: request.runID, origin: .phoneLaunch, now: now)
            if cache.activeRuns.isEmpty { actions += [.log(.requestingSync)] + send(.requestSync) }
            return actions
        case .sessionStartRequested(let runID, let now):
            return startSession(runID: runID, origin: .watch, now: now)
        case .editRequested(let edit, let runID, let now):
            return editRequested(edit, runID: runID, now: now)
        case .messageDelivered(let token, let now):
            guard case .workoutUpdate(let run, let epoch)? = messagesInFlight.removeValue(forKey: token) else {
                return []
            }
            return editDelivered(run, madeAgainst: epoch, now: now)
        case .messageSendFailed(let token, let reason):
            return messageSendFailed(token, reason: reason)
        case .sessionEndedBySystem(let failure, let now):
            return sessionActions(coordinator.handle(.endedBySystem(failure: failure, now: now)))
        case .sessionCleared:
            return sessionActions(coordinator.handle(.cleared))
        case .linkActivated:
            return [.log(.forwardingUndelivered)] + forwardUndelivered()
        case .transferRefused(let message, let reason):
            guard case .workoutUpdate(let run, _) = message else { return [] }
            if queuedTransfers[run.id] == run.version { queuedTransfers[run.id] = nil }
            return [.log(.transferRefused(run: run.id, reason: reason))]
        case .transferCancelled(let message):
            return transferCancelled(message)
        case .transferDelivered(let message, let now):
            guard case .workoutUpdate(let run, let epoch) = message else { return [] }
            if queuedTransfers[run.id] == run.version { queuedTransfers[run.id] = nil }
            return editDelivered(run, madeAgainst: epoch, now: now)
        }
    }
}

/// Names one `sendMessage` so the shell can report how it ended; issued by the engine from a counter.
package struct MessageToken: Hashable, Comparable, Sendable, CustomStringConvertible {
    package var rawValue: UInt64

    package init(rawValue: UInt64) {
        self.rawValue = rawValue
    }

    package static func < (lhs: MessageToken, rhs: MessageToken) -> Bool { lhs.rawValue < rhs.rawValue }

    package var description: String { "#\(rawValue)" }

    /// The token after this one.
    var next: MessageToken { MessageToken(rawValue: rawValue + 1) }
}

/// A re-send of an uncovered edit: the local version sent, and the pushed copy that left it uncovered.
struct UncoveredResend: Equatable, Sendable {
    var version: Stamp
    var pushed: WorkoutDocument?
}
