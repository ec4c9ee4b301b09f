/// Merges the phone's and the watch's journals into one mermaid `sequenceDiagram`, with the seeds'
/// participants: a send on one side and its receipt on the other (same exchange, same causal id) are
/// one arrow between the bridges; decisions, partitions and heals are notes.
package enum TraceDiagram {
    /// The participants, in the seeds' order and naming (001's S1–S7 diagrams).
    static let participants: [(id: String, name: String)] = [
        ("PUI", "Phone UI"), ("SE", "SyncEngine"), ("PB", "PhoneBridge"), ("WB", "WatchBridge"),
        ("WS", "Watch session"), ("WUI", "Watch UI"),
    ]

    /// The diagram for `events` from both journals (any order); `markdown` wraps it in a mermaid fence.
    package static func render(_ events: [TraceEvent], markdown: Bool = false) -> String {
        var lines = ["sequenceDiagram"] + participants.map { "    participant \($0.id) as \($0.name)" }
        lines += steps(events).map { "    " + mermaid($0) }
        let diagram = lines.joined(separator: "\n") + "\n"
        return markdown ? "```mermaid\n" + diagram + "```\n" : diagram
    }

    /// What the diagram draws for `events` from both journals (any order), in order, in no notation.
    package static func steps(_ events: [TraceEvent]) -> [TraceStep] {
        let ordered = merged(events)
        let matched = pairs(ordered)
        var steps: [TraceStep] = []
        // Both sides see the link go up and down: one step per change, not one per side.
        var linkUp: Bool?
        for (index, event) in ordered.enumerated() {
            if event.event == .linkUp || event.event == .linkDown {
                let up = event.event == .linkUp
                guard linkUp != up else { continue }
                steps.append(up ? .linkUp(heal: linkUp == false) : .linkDown(detail: event.detail))
                linkUp = up
                continue
            }
            steps += self.steps(for: event, matched: matched[index])
        }
        return steps
    }

    /// One step as a mermaid statement.
    static func mermaid(_ step: TraceStep) -> String {
        switch step {
        case .arrow(let from, let to, let style, let label):
            let arrow =
                switch style {
                case .call: "->>"
                case .answer: "-->>"
                case .unanswered: "-)"
                case .failed: "-x"
                }
            return "\(from)\(arrow)\(to): \(clean(label))"
        case .note(let over, let text):
            return "Note over \(over.joined(separator: ",")):" + (text.isEmpty ? "" : " " + clean(text))
        case .linkDown(let detail):
            return "Note over PB,WB: link down" + (detail.map { " " + clean($0) } ?? "")
        case .linkUp(let heal):
            return "Note over PB,WB: link up" + (heal ? " (heal)" : "")
        }
    }

    /// Both journals in one order: wall time, then each daemon's own monotonic order.
    package static func merged(_ events: [TraceEvent]) -> [TraceEvent] {
        events.sorted { ($0.wall, $0.side == .phone ? 0 : 1, $0.mono) < ($1.wall, $1.side == .phone ? 0 : 1, $1.mono) }
    }

    /// For each index, whether it is half of a send/receipt pair: a receipt pairs with the latest
    /// earlier unpaired send of the same exchange and causal id from the other side.
    static func pairs(_ events: [TraceEvent]) -> [Bool] {
        var matched = Array(repeating: false, count: events.count)
        var openSends: [String: [Int]] = [:]
        for (index, event) in events.enumerated() {
            guard let crossing = event.event.crossing, let cause = event.cause else { continue }
            let key = "\(crossing.family) \(cause)"
            let sendSide = crossing.isSend ? event.side : event.side.peer
            let fullKey = "\(key) \(sendSide.rawValue)"
            if crossing.isSend {
                openSends[fullKey, default: []].append(index)
            } else if let send = openSends[fullKey]?.popLast() {
                matched[send] = true
                matched[index] = true
            }
        }
        return matched
    }

    private static func bridge(_ side: TraceEvent.Side) -> String { side == .phone ? "PB" : "WB" }

    /// The steps for one event (none for the receipt half of a pair).
    static func steps(for event: TraceEvent, matched: Bool) -> [TraceStep] {
        let here = bridge(event.side)
        let there = bridge(event.side.peer)
        if let crossing = event.event.crossing {
            guard crossing.isSend || !matched else { return [] }
            let (from, to) = crossing.isSend ? (here, there) : (there, here)
            let answer = crossing.family.hasSuffix(".ack") || crossing.family.hasSuffix(".reply")
            let style: TraceStep.ArrowStyle = !crossing.isSend || matched ? (answer ? .answer : .call) : .unanswered
            var label = exchangeLabel(crossing.family, event)
            if crossing.isSend && !matched { label += " (no receipt)" }
            return [.arrow(from: from, to: to, style: style, label: label)]
        }
        let detail = event.detail.map { " " + $0 } ?? ""
        let run = event.run.map { " run " + short($0) } ?? ""
        func note(_ text: String, over participant: String = here) -> [TraceStep] {
            [.note(over: [participant], text: text)]
        }
        switch event.event {
        case .started:
            return note("\(event.side == .phone ? "phoned" : "watchd") started\(detail)")
        case .linkUp, .linkDown:
            return []  // one step per change of the link, made by `steps(_:)`
        case .reachability:
            return note("\(event.side.peer.rawValue) reachable:\(detail)")
        case .messageAttempt:
            return []
        case .messageFailed:
            return [
                .arrow(
                    from: here, to: there, style: .failed,
                    label: "sendMessage id \(tail(event.cause))\(run) failed\(detail)")
            ]
        case .transferQueued:
            return [
                .arrow(
                    from: here, to: here, style: .call, label: "transferUserInfo queued seq \(tail(event.cause))\(run)")
            ]
        case .transferFailed:
            return note("transfer seq \(tail(event.cause)) not delivered\(detail)")
        case .transferCancelled:
            return note("transfer seq \(tail(event.cause)) cancelled")
        case .launchDropped:
            return note("launch dropped (not linked)")
        case .ingest:
            return [
                .arrow(from: "PB", to: "SE", style: .call, label: "ingestFromWatch\(run)"),
                .note(over: ["SE"], text: event.detail ?? ""),
            ]
        case .push:
            // the applicationContext arrow after it carries the generation
            return [.arrow(from: "SE", to: "PB", style: .call, label: "pushAll\(detail)")]
        case .fileWritten:
            return event.side == .phone ? note("file written\(run)", over: "SE") : note("cached\(run)", over: "WB")
        case .session:
            return [.arrow(from: "WB", to: "WS", style: .call, label: "session\(detail)")]
        case .app:
            return note("app\(detail)")
        case .contextSend, .contextReceive, .contextAckSend, .contextAckReceive, .messageSend, .messageReceive,
            .messageReplySend, .messageReplyReceive, .transferSend, .transferReceive, .transferAckSend,
            .transferAckReceive, .launchSend, .launchReceive:
            return []  // crossings, handled above
        }
    }

    private static func exchangeLabel(_ family: String, _ event: TraceEvent) -> String {
        let number = tail(event.cause)
        let run = event.run.map { " run " + short($0) } ?? ""
        let detail = event.detail.map { " " + $0 } ?? ""
        switch family {
        case "context": return "applicationContext gen \(number)\(detail)"
        case "context.ack": return "contextAck gen \(number)"
        case "message": return "sendMessage id \(number)\(run)"
        case "message.reply": return "reply id \(number)\(detail)"
        case "transfer": return "transferUserInfo seq \(number)\(run)"
        case "transfer.ack": return "userInfoAck seq \(number)"
        case "launch": return "launch\(run)"
        default: return "\(family) \(number)"
        }
    }

    /// The number after the last `/` of a causal id (generation, message id or sequence).
    private static func tail(_ cause: String?) -> String {
        guard let cause else { return "?" }
        return cause.split(separator: "/").last.map(String.init) ?? cause
    }

    /// A document ID's first 8 characters: enough to tell runs apart in a picture.
    private static func short(_ id: String) -> String { String(id.prefix(8)) }

    /// Text mermaid would read as syntax (`;` ends a statement, `#` starts an entity) made inert.
    static func clean(_ text: String) -> String {
        String(text.map { $0 == ";" ? "," : $0 == "#" ? "№" : $0 == "\n" ? " " : $0 })
    }
}
