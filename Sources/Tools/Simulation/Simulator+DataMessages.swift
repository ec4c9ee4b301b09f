import AdminCommands
import LinkProtocol
import Nodes

/// `data send` in the workload: raw data messages both ways (`sendMessageData`), best effort. Each
/// payload is one no one sent before (the side and a counter), and every other one asks for a reply.
/// What is checked: a reply echoes exactly the bytes sent; every send of a process still running is
/// answered by the time all is quiet; a receiver only ever holds payloads the other side sent, each
/// once.
extension Simulator {
    struct PendingData {
        var side: Side
        var payload: [UInt8]
        var wantsReply: Bool
        /// The sender's life when it sent: a restart owes no answer.
        var life: UInt64
    }

    func sendData(from side: Side) {
        dataSent += 1
        let payload: [UInt8] =
            [side == .phone ? 0x50 : 0x57] + withUnsafeBytes(of: UInt32(dataSent).bigEndian, Array.init)
        let wantsReply = dataSent % 2 == 0
        let command = DataCommand.send(bytes: payload, wantsReply: wantsReply, count: 1)
        let life = side == .phone ? phone.life : watch.life
        let reply = side == .phone ? phonectl(.data(command)) : watchctl(.data(command))
        guard side == .phone ? phone.isUp : watch.isUp else { return }
        sentPayloads[side, default: []].insert(payload)
        let pending = PendingData(side: side, payload: payload, wantsReply: wantsReply, life: life)
        if let reply {
            checkDataReply(reply, for: pending)
        } else {
            pendingData[AdminRequestID(lastRequest)] = pending
        }
    }

    /// The data sends answered since, and what each receiver holds.
    func harvestDataReplies() {
        for (request, pending) in pendingData.sorted(by: { $0.key.rawValue < $1.key.rawValue }) {
            let (life, reply) =
                pending.side == .phone
                ? (phone.life, phone.replies.removeValue(forKey: request))
                : (watch.life, watch.replies.removeValue(forKey: request))
            if life != pending.life {
                pendingData[request] = nil
            } else if let reply {
                pendingData[request] = nil
                checkDataReply(reply, for: pending)
            }
        }
        checkReceived(phone.node?.inner.dataMessages.received, by: .phone)
        checkReceived(watch.node?.inner.dataMessages.received, by: .watch)
    }

    /// At quiescence every send of a process that kept running has its answer.
    func unansweredData() -> [String] {
        // In request order: a seed's record is the same on every run.
        pendingData.sorted { $0.key.rawValue < $1.key.rawValue }.map(\.value)
            .filter { $0.life == ($0.side == .phone ? phone.life : watch.life) }
            .map { "the \($0.side)'s data send \(DataCommand.hex($0.payload)) was never answered" }
    }

    private func checkDataReply(_ reply: AdminResponse, for pending: PendingData) {
        guard reply.status == .ok else { return }  // best effort: an error is an allowed outcome
        // The reply's text (`DataMessages.sendEnded`): the echo in hex, or that it was delivered.
        let bytes = pending.payload.count
        let expected =
            pending.wantsReply
            ? "replied with \(bytes) bytes: \(DataCommand.hex(pending.payload))" : "delivered \(bytes) bytes"
        if reply.text != expected {
            dataViolation(
                "the \(pending.side)'s data send \(DataCommand.hex(pending.payload)) was answered "
                    + "\((reply.text ?? "").debugDescription), expected \(expected.debugDescription)")
        }
    }

    private func checkReceived(_ received: [AdminReply.DataReceived]?, by side: Side) {
        guard let received else { return }
        let peer: Side = side == .phone ? .watch : .phone
        let sent = Set((sentPayloads[peer] ?? []).map { DataCommand.hex($0) })
        var seen: Set<String> = []
        for message in received {
            if !sent.contains(message.hex) {
                dataViolation("the \(side) received data \(message.hex) the \(peer) never sent")
            } else if !seen.insert(message.hex).inserted {
                dataViolation("the \(side) received data \(message.hex) twice")
            }
        }
    }

    /// Each finding once: the receivers are looked at again on every harvest.
    func dataViolation(_ found: String) {
        if !dataViolations.contains(found) { dataViolations.append(found) }
    }
}
