/// The watch's redial schedule while the link is down: capped exponential backoff with jitter.
enum DialState: Sendable, Equatable {
    /// No dial pending: a handshake is under way, or nothing has asked for one.
    case idle
    /// A dial is in flight; `connectionOpened` or `dialFailed` ends it.
    case dialling
    /// The next dial is due at this instant (a `tick` at or after it starts it).
    case due(LinkInstant)
}

extension LinkEngine {
    mutating func startDial(into actions: inout [Action]) {
        guard case .down(let dial, let failures) = state, dial != .dialling, handshaking.isEmpty else { return }
        state = .down(.dialling, failures: failures)
        actions.append(.dial)
    }

    mutating func dialFailed(reason: String, now: LinkInstant, into actions: inout [Action]) {
        guard case .down(let dial, let failures) = state else { return }
        if dial == .dialling { state = .down(.idle, failures: failures) }
        // Logged once per outage, not once per attempt: a phone that is down for an hour would
        // otherwise fill the log with one line a second.
        if failures == 0 { actions.append(.log(.dialFailed(reason: reason))) }
        scheduleRedial(now: now)
    }

    /// Next delay: `initial × 2^failures`, capped, then a uniform jitter in [½·delay, delay].
    mutating func scheduleRedial(now: LinkInstant) {
        guard configuration.role == .watch, case .down(let dial, let failures) = state, dial != .dialling,
            handshaking.isEmpty
        else { return }
        let exponent = min(failures, 20)
        var delay = configuration.initialRedialDelay * (1 << exponent)
        if delay > configuration.maximumRedialDelay { delay = configuration.maximumRedialDelay }
        let micros = max(Int64(1), delay.wholeMicrosecondsForLink)
        let jittered = micros / 2 + Int64(random.next() % UInt64(micros / 2 + 1))
        state = .down(.due(now.advanced(by: .microseconds(jittered))), failures: failures + 1)
    }
}
