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
        let ordered = merged(events)
        let matched = pairs(ordered)
        var lines = ["sequenceDiagram"] + participants.map { "    participant \($0.id) as \($0.name)" }
        // Both sides see the link go up and down: one note per change, not one per side.
        var linkUp: Bool?
        for (index, event) in ordered.enumerated() {
            if event.event == .linkUp || event.event == .linkDown {
                let up = event.event == .linkUp
                guard linkUp != up else { continue }
                let heal = up && linkUp == false
                linkUp = up
                let detail = event.detail.map { " " + clean($0) } ?? ""
                lines.append(
                    up
                        ? "    Note over PB,WB: link up\(heal ? " (heal)" : "")"
                        : "    Note over PB,WB: link down\(detail)")
                continue
            }
            lines += statements(for: event, matched: matched[index]).map { "    " + $0 }
        }
        let diagram = lines.joined(separator: "\n") + "\n"
        return markdown ? "```mermaid\n" + diagram + "```\n" : diagram
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

    /// The mermaid statements for one event (none for the receipt half of a pair).
    static func statements(for event: TraceEvent, matched: Bool) -> [String] {
        let here = bridge(event.side)
        let there = bridge(event.side.peer)
        if let crossing = event.event.crossing {
            guard crossing.isSend || !matched else { return [] }
            let (from, to) = crossing.isSend ? (here, there) : (there, here)
            let answer = crossing.family.hasSuffix(".ack") || crossing.family.hasSuffix(".reply")
            let arrow = !crossing.isSend || matched ? (answer ? "-->>" : "->>") : "-)"
            var label = exchangeLabel(crossing.family, event)
            if crossing.isSend && !matched { label += " (no receipt)" }
            return ["\(from)\(arrow)\(to): \(label)"]
        }
        let detail = event.detail.map { " " + clean($0) } ?? ""
        let run = event.run.map { " run " + short($0) } ?? ""
        switch event.event {
        case .started:
            return ["Note over \(here): \(event.side == .phone ? "phoned" : "watchd") started\(detail)"]
        case .linkUp, .linkDown:
            return []  // one note per change of the link, drawn by `render`
        case .reachability:
            return ["Note over \(here): \(event.side.peer.rawValue) reachable:\(detail)"]
        case .messageAttempt:
            return []
        case .messageFailed:
            return ["\(here)-x\(there): sendMessage id \(tail(event.cause))\(run) failed\(detail)"]
        case .transferQueued:
            return ["\(here)->>\(here): transferUserInfo queued seq \(tail(event.cause))\(run)"]
        case .transferFailed:
            return ["Note over \(here): transfer seq \(tail(event.cause)) not delivered\(detail)"]
        case .transferCancelled:
            return ["Note over \(here): transfer seq \(tail(event.cause)) cancelled"]
        case .launchDropped:
            return ["Note over \(here): launch dropped (not linked)"]
        case .ingest:
            return ["PB->>SE: ingestFromWatch\(run)", "Note over SE:\(detail)"]
        case .push:
            return ["SE->>PB: pushAll\(detail)"]  // the applicationContext arrow after it carries the generation
        case .fileWritten:
            return [event.side == .phone ? "Note over SE: file written\(run)" : "Note over WB: cached\(run)"]
        case .session:
            return ["WB->>WS: session\(detail)"]
        case .contextSend, .contextReceive, .contextAckSend, .contextAckReceive, .messageSend, .messageReceive,
            .messageReplySend, .messageReplyReceive, .transferSend, .transferReceive, .transferAckSend,
            .transferAckReceive, .launchSend, .launchReceive:
            return []  // crossings, handled above
        }
    }

    private static func exchangeLabel(_ family: String, _ event: TraceEvent) -> String {
        let number = tail(event.cause)
        let run = event.run.map { " run " + short($0) } ?? ""
        let detail = event.detail.map { " " + clean($0) } ?? ""
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
