import AdminCommands
import LinkProtocol
import Nodes
import WorkoutModel

/// Carrying out what the node and its link engine decide, as `NodeShell` and `LinkEndpoint` do.
extension SimHost {

    /// Carries out an action that is not a durable write (the runner's port).
    func carryOut(_ action: LinkedNode<Node>.Action) {
        apply(action)
    }

    /// Carries out any action: at once, or, for a durable write, as it lands.
    func apply(_ action: LinkedNode<Node>.Action) {
        switch action {
        case .inner(let action):
            if let shared = Node.nodeAction(action) { perform(shared) } else { Store.perform(self, action) }
        case .link(let action, _):
            perform(action)
        case .messageAttempt, .appendsRenumbered, .resume:
            break  // the journal; no append is ever refused here; the runner's own
        }
    }

    func perform(_ action: NodeAction) {
        switch action {
        case .link:
            // The node hands its link verbs to its engine; `keepReceivedFile` (no files are
            // simulated) is all that reaches a shell.
            break
        case .log(let line):
            world.record(
                side,
                "log \(line.component) \(line.message) \(line.fields.map { "\($0.key)=\($0.value)" }.joined(separator: " "))"
            )
        case .journal:
            break
        case .reply(let request, let response):
            // Answered once, as the shell answers: a node's later reply to the same request (the
            // reason after a failed write) reaches no one once the first went out.
            if replies[request] == nil { replies[request] = response }
        case .replyTrace(let request, _):
            replies[request] = .ok(text: "no events", json: "")
        case .armTimer(let timer, let at):
            let token = world.random.next()
            armed[timer] = token
            armedAt[timer] = (at, armedFor: max(wallNow.duration(to: at), .zero), since: world.now)
            world.schedule(after: NodeTimer.wait(until: at, now: wallNow), .hostTimer(side, timer, token: token))
        case .cancelTimer(let timer):
            armed[timer] = nil
        case .callAtEndOfTurn:
            break  // the runner's own
        case .persistLiveVersion(let version):
            disk.liveVersion = version
        case .persistClock(let stamp):
            disk.clock = stamp
        case .markStoppedCleanly:
            // As `LinkStateDirectory`: the slot is flushed, then marked; nothing without a slot.
            if disk.contextSlot != nil {
                disk.flushedContextSlot = disk.contextSlot
                disk.stoppedCleanly = true
            }
        case .notifyStopping, .closeServices:
            world.network.hostDied(side)
        case .exit(let code):
            world.record(side, "exit \(code)")
            crash()
            onExit(code)
        }
    }

    // MARK: The link engine's actions

    func perform(_ action: LinkEngine.Action) {
        switch action {
        case .send(let connection, let frame):
            if case .userInfoAck(let queue, let sequence) = frame {
                let key = TransferKey(queue: queue, sequence: sequence)
                if let digest = delivered[key] { acknowledged[key] = digest }
            }
            if case .message = frame { onMessageSent() }
            let bytes = seals[connection.rawValue]?.seal(frame) ?? frame.encoded()
            world.network.send(from: side, connection: connection.rawValue, bytes)
        case .seal(let connection, let seal):
            seals[connection.rawValue] = seal
        case .close(let connection, let reason):
            seals[connection.rawValue] = nil
            world.record(side, "close #\(connection.rawValue) \(reason)")
            world.network.close(from: side, connection: connection.rawValue)
        case .dial:
            world.network.dial(from: side)
        case .scheduleWakeUp(let at):
            world.schedule(after: max(at.sinceOrigin - linkNow.sinceOrigin, .zero), .linkTick(side, life: life))
        case .appendTransfer(let sequence, let payload, let complication):
            // Written now, made durable by a group commit 1–5 ms later (`LinkEndpoint`'s outbox
            // thread); the engine hears of the transfer only then.
            let outbox = complication ? \LinkDisk.complicationOutbox : \LinkDisk.outbox
            let enqueuedAt = wallNow.microsecondsSinceEpoch
            guard disk[keyPath: outbox].append(sequence: sequence, payload, enqueuedAtMicros: enqueuedAt) else {
                world.record(side, "outbox refused transfer \(sequence): out of order")
                outOfOrderAppend = "the \(side)'s engine issued transfer \(sequence) out of the outbox's order"
                return
            }
            if !syncScheduled {
                syncScheduled = true
                let milliseconds = world.pick(1...5)
                world.schedule(after: .milliseconds(milliseconds), .outboxSynced(side, life: life))
                onCommitStarted(milliseconds)
            }
        case .persistPeer(let peer):
            disk.knownPeer = peer
        case .persistContextSlot(let slot, let flushed):
            disk.contextSlot = slot
            if flushed { disk.flushedContextSlot = slot }
        case .persistReceivedContext(let received):
            disk.receivedContext = received
        case .persistTransferMark(let queue, let mark):
            if mark.highest >= disk.transferMarks[queue]?.highest ?? 0 { disk.transferMarks[queue] = mark }
        case .removeTransfers(let sequences, _):
            disk.outbox.resolve(sequences)
        case .removeComplications(let sequences):
            disk.complicationOutbox.resolve(sequences)
        case .persistWatchState(let state):
            disk.watchState = state
        case .enqueueFile(let sequence, _, _):
            // The workload sends no files (docs/SIMULATION.md).
            postAfterHeld(.fileNotQueued(sequence: sequence, reason: "not simulated"))
        case .sendFileChunk, .removeOutboundFile, .prepareInboundFile, .writeInboundChunk,
            .verifyInboundFile,
            .deliverInboundFile, .discardInboundFile:
            // No files are queued in the simulation yet.
            world.record(side, "unexpected file action \(action)")
        case .notify(let notification):
            // The node takes it as its next step; here it is only checked.
            // The same contents again; a sender restored from a backup reuses keys for new ones.
            if case .userInfoReceived(let key, let payload) = notification {
                let digest = QueueMark.digest(ofPayload: payload)
                if acknowledged[key] == digest { appliedTwice = key }
                delivered[key] = digest
            }
            onNotified(notification)
        case .log(let line):
            world.record(side, "link \(line)")
        }
    }

    /// A timer cancelled, re-armed, of an earlier life, or of a process that is down, does nothing.
    func timerFired(_ timer: NodeTimer, token: UInt64) {
        guard isUp, armed[timer] == token else { return }
        // As `NodeShell.arm`: fired when due, on the wall clock (which may have stepped) or the wait.
        if let (at, armedFor, since) = armedAt[timer] {
            let waited = world.now - since
            guard NodeTimer.isDue(at: at, now: wallNow, waited: waited, armedFor: armedFor) else {
                let wait = NodeTimer.wait(until: at, now: wallNow, waited: waited, armedFor: armedFor)
                world.schedule(after: wait, .hostTimer(side, timer, token: token))
                return
            }
        }
        armed[timer] = nil
        post(Node.reported(.timerFired(timer)))
    }

    func linkTick(life: UInt64) {
        guard life == self.life, isUp else { return }
        handleLink(.tick(now: linkNow))
    }
}
