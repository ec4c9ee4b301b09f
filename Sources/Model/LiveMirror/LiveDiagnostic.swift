import WorkoutModel

/// What the live mirror reports for the log. Typed, so tests assert what happened rather than its
/// wording; `description` is the line the shell logs.
package enum LiveDiagnostic: Equatable, Sendable, CustomStringConvertible {
    /// A flow opened here: this side drives it.
    case driving(run: DocumentID, LiveProgress)
    /// A person's action moved the flow open here.
    case moved(run: DocumentID, LiveProgress)
    case closed(run: DocumentID, version: Int)
    /// Time crossed `crossed` timed boundaries of a shown flow.
    case crossed(run: DocumentID, LivePosition, setCount: Int, role: LiveScreen.Role, crossed: Int)
    /// A document showed more sets done than the flow: it jumped forward.
    case repairedForward(run: DocumentID, LivePosition, setCount: Int, role: LiveScreen.Role)
    /// The run left the phone's push: its flow, cover and staged frame are forgotten.
    case removed(run: DocumentID)
    case coverDismissed(run: DocumentID)
    case undecodableMessage(DocumentError)
    /// A send failed while the peer is away: the frame stays staged for the next reachability edge.
    case sendFailedStaged(run: DocumentID, version: Int)
    case sendFailedRetrying(run: DocumentID, version: Int, retry: Int, at: Timestamp)
    case sendGivenUp(run: DocumentID, version: Int)
    case stagedDropped(run: DocumentID, staged: LiveOrder, peer: LiveOrder)
    case outrankedByStaged(run: DocumentID, received: LiveOrder, staged: LiveOrder)
    case staleWhileDriving(run: DocumentID, received: LiveOrder, driving: LiveOrder)
    case adoptedWhileOpen(run: DocumentID, LiveProgress)
    case staleAfterEnd(run: DocumentID, received: LiveOrder, ended: LiveOrder)
    case staleWhileFollowing(run: DocumentID, received: LiveOrder, following: LiveOrder)
    case following(run: DocumentID, LiveProgress, coverDismissed: Bool)
    /// The peer closed a run still open here: this side keeps driving and re-sends its frame.
    case peerClosedWhileDriving(run: DocumentID, version: Int)
    case staleEndWhileFollowing(run: DocumentID, received: LiveOrder, following: LiveOrder)
    case peerClosed(run: DocumentID, version: Int)

    package var description: String {
        switch self {
        case .driving(let run, let frame): "live: driving run \(run): \(Self.summary(frame))"
        case .moved(let run, let frame): "live: run \(run): \(Self.summary(frame))"
        case .closed(let run, let version): "live: closed run \(run) (v\(version))"
        case .crossed(let run, let position, let setCount, let role, let crossed):
            "live: run \(run) now \(position.phase), set \(position.setIndex + 1) of \(setCount) "
                + "(\(role.rawValue)\(crossed == 1 ? "" : ", caught up \(crossed) boundaries"))"
        case .repairedForward(let run, let position, let setCount, let role):
            "live: run \(run) repaired forward to \(position.phase), set \(position.setIndex + 1) of "
                + "\(setCount) (\(role.rawValue)) from the absorbed document"
        case .removed(let run): "live: run \(run) removed: flow, cover and staged frame forgotten"
        case .coverDismissed(let run): "live: cover for run \(run) dismissed"
        case .undecodableMessage(let error): "live: ignored an undecodable message: \(error)"
        case .sendFailedStaged(let run, let version):
            "live: send of v\(version) for run \(run) failed; staged until the peer is reachable"
        case .sendFailedRetrying(let run, let version, let retry, let at):
            "live: send of v\(version) for run \(run) failed; retry \(retry) of \(LiveStaging.maximumRetries) at \(at)"
        case .sendGivenUp(let run, let version):
            "live: gave up on v\(version) for run \(run) after \(LiveStaging.maximumRetries) retries; "
                + "durable repair is the safety net"
        case .stagedDropped(let run, let staged, let peer):
            "live: dropped staged \(staged) for run \(run): the peer is ahead (\(peer))"
        case .outrankedByStaged(let run, let received, let staged):
            "live: ignored \(received) for run \(run): staged \(staged) outranks it"
        case .staleWhileDriving(let run, let received, let driving):
            "live: ignored stale \(received) for run \(run): driving at \(driving)"
        case .adoptedWhileOpen(let run, let frame):
            "live: run \(run) open here adopted the peer's \(Self.summary(frame))"
        case .staleAfterEnd(let run, let received, let ended):
            "live: ignored stale \(received) for run \(run): the peer ended it at \(ended)"
        case .staleWhileFollowing(let run, let received, let following):
            "live: ignored stale \(received) for run \(run): following \(following)"
        case .following(let run, let frame, let dismissed):
            "live: following run \(run): \(Self.summary(frame))\(dismissed ? " (cover dismissed)" : "")"
        case .peerClosedWhileDriving(let run, let version):
            "live: the peer closed run \(run) (v\(version)); still driving it here"
        case .staleEndWhileFollowing(let run, let received, let following):
            "live: ignored stale end \(received) for run \(run): following \(following)"
        case .peerClosed(let run, let version): "live: the peer closed run \(run) (v\(version)); cover dropped"
        }
    }

    /// `Squat: ready, set 1 of 3 (v8)`.
    private static func summary(_ frame: LiveProgress) -> String {
        "\(frame.exerciseName): \(frame.phase), set \(frame.setIndex + 1) of \(frame.setCount) (v\(frame.version))"
    }
}
