/// The ordered actions one event produces, the shared ones wrapped in the node's own enum.
protocol NodeOutput {
    associatedtype Action
    var actions: [Action] { get set }
    static func shared(_ action: NodeAction) -> Action
    static func sharedPart(of action: Action) -> NodeAction?
}

extension NodeOutput {
    mutating func node(_ action: NodeAction) { actions.append(Self.shared(action)) }
    mutating func node(_ list: [NodeAction]) { actions += list.map(Self.shared) }

    mutating func log(
        _ level: LogLine.Level, _ component: String, _ message: String, _ fields: [(String, String)] = []
    ) {
        node(.log(LogLine(level, component, message, fields)))
    }

    /// A durable write failed, so nothing after it in the list ran: each admin request that list
    /// answered hears why (one whose reply went out before the write keeps that reply: the shell
    /// answers a request once), then the node exits 75, to recover from disk on restart. `unsure`
    /// says what may have happened all the same (the watch's edit message goes before its write).
    mutating func durableWriteFailed(
        _ daemon: String, reason: String, answering requests: [AdminRequestID], unsure: String? = nil
    ) {
        log(.error, daemon, "durable write failed; exiting to recover from disk", [("reason", reason)])
        let outcome = unsure.map { "; \($0)" } ?? ""
        for request in requests {
            node(
                .reply(
                    request, .error("durable write failed: \(reason)\(outcome); \(daemon) exits to recover from disk")))
        }
        node(.exit(code: 75))
    }

    /// Numbers the messages among the actions, in order (`MessageLedger`): the last step of an
    /// event, once nothing can throw.
    mutating func numberMessages(in ledger: inout MessageLedger) {
        for index in actions.indices {
            guard case .link(let command) = Self.sharedPart(of: actions[index]) else { continue }
            actions[index] = Self.shared(.link(ledger.number(command)))
        }
    }
}

extension Array {
    /// The admin requests these actions answer, in order.
    func answeredRequests(_ nodeAction: (Element) -> NodeAction?) -> [AdminRequestID] {
        compactMap { if case .reply(let request, _) = nodeAction($0) { request } else { nil } }
    }
}
