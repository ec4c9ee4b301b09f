import Foundation
import WorkoutModel

/// What the checks found; every count but the informational ones must be zero to pass.
struct CheckResult: Codable, Sendable {
    var attempted = 0
    var acknowledged = 0
    var refused = 0
    var unavailable = 0
    var indeterminate = 0
    /// Edits the CLI refused to send for their command line: the tester's own mistakes.
    var malformed = 0
    var watchAttempted = 0
    var watchAcknowledged = 0
    var phoneAttempted = 0
    var phoneAcknowledged = 0
    /// Acknowledged watch/phone edits to runs the phone later discarded (not expected to survive).
    var supersededByDiscard = 0
    var lost = 0
    var appliedTwice = 0
    var outOfOrder = 0
    var resurrected = 0
    var phantom = 0
    /// phoned's ingest outcomes (`outcome=` of its `component=ingest` lines), and by channel.
    var ingestOutcomes: [String: Int] = [:]
    var acceptedVia: [String: Int] = [:]
    var discardedRuns = 0
    /// phoned's "external change: run …" lines. Nothing but phoned writes its directory in these
    /// tests, so each is phoned's own write seen late by its watcher and taken for someone else's.
    var externalChanges = 0
    /// Up to 20 lines explaining each failure.
    var problems: [String] = []

    /// The phone's final state could not be read: nothing could be checked against it, so the run
    /// fails on that — a failed read is never counted as lost edits.
    var finalStateUnread = false

    var passed: Bool {
        !finalStateUnread && malformed == 0 && lost == 0 && appliedTwice == 0 && outOfOrder == 0 && resurrected == 0
            && phantom == 0
    }

    mutating func problem(_ text: String) {
        if problems.count < 20 { problems.append(text) }
    }
}

/// The end-of-test checks over the edit ledger, the phone's final documents, the watch's cache and
/// phoned's log (definitions in `--help` and docs/CHAOS.md).
enum Checker {
    struct Inputs {
        var records: [EditRecord]
        /// `phonectl workouts --all --json` at the end; nil when that read failed.
        var phoneRuns: [WorkoutDocument]?
        /// `watchctl workouts --json` at the end.
        var watchRuns: [WorkoutDocument]
        /// Stubs in the phone's document directory.
        var stubs: Set<String>
        /// Run IDs with a file under Workouts/.
        var workoutFiles: Set<String>
        /// phoned's stderr across all incarnations.
        var phoneLog: String
    }

    static func check(_ inputs: Inputs) -> CheckResult {
        var result = CheckResult()
        count(inputs.records, into: &result)
        guard let phoneRuns = inputs.phoneRuns else {
            // Nothing read is not an empty phone: check nothing against it, and fail on the read.
            result.finalStateUnread = true
            result.problem("could not read the phone's final state (phonectl workouts --all --json failed)")
            return result
        }
        let final = Dictionary(phoneRuns.map { ($0.id.rawValue, $0) }) { first, _ in first }
        checkLost(inputs, final: final, into: &result)
        checkPhantoms(inputs, final: final, into: &result)
        checkLog(inputs, into: &result)
        checkResurrections(inputs, final: final, into: &result)
        return result
    }

    private static func count(_ records: [EditRecord], into result: inout CheckResult) {
        for record in records {
            result.attempted += 1
            if record.side == .watch { result.watchAttempted += 1 } else { result.phoneAttempted += 1 }
            switch record.outcome {
            case .acknowledged:
                result.acknowledged += 1
                if record.side == .watch { result.watchAcknowledged += 1 } else { result.phoneAcknowledged += 1 }
            case .refused: result.refused += 1
            case .unavailable: result.unavailable += 1
            case .indeterminate: result.indeterminate += 1
            case .malformed:
                result.malformed += 1
                result.problem("malformed: edit #\(record.number) was never sent: \(record.detail)")
            }
        }
    }

    /// Every acknowledged edit must be visible in the phone's final state, unless its run was discarded.
    private static func checkLost(_ inputs: Inputs, final: [String: WorkoutDocument], into result: inout CheckResult) {
        for record in inputs.records where record.outcome == .acknowledged {
            guard let run = record.run else { continue }
            switch record.kind {
            case .discard:
                if !inputs.stubs.contains(run) {
                    result.lost += 1
                    result.problem(
                        "lost: discard #\(record.number) of run \(run) was acknowledged but has no tombstone")
                }
            case .end:
                if !inputs.stubs.contains(run), final[run].map({ $0.status != .completed }) ?? true {
                    result.lost += 1
                    result.problem(
                        "lost: end #\(record.number) of run \(run) was acknowledged but the run is not completed")
                }
            case .start:
                if final[run] == nil, !inputs.stubs.contains(run) {
                    result.lost += 1
                    result.problem("lost: start #\(record.number) created run \(run), which the phone no longer has")
                }
            case .complete:
                if inputs.stubs.contains(run) {
                    result.supersededByDiscard += 1
                    continue
                }
                guard let document = final[run] else {
                    result.lost += 1
                    result.problem("lost: \(record.side) edit #\(record.number): run \(run) is missing on the phone")
                    continue
                }
                guard document.logs.indices.contains(record.log),
                    document.logs[record.log].sets.indices.contains(record.set)
                else {
                    result.lost += 1
                    result.problem(
                        "lost: \(record.side) edit #\(record.number): run \(run) has no set \(record.log + 1).\(record.set + 1)"
                    )
                    continue
                }
                let set = document.logs[record.log].sets[record.set]
                if !(set.isDone && set.reps == record.reps && set.weight == record.weight) {
                    result.lost += 1
                    let found = set.isDone ? "\(set.reps ?? -1)x\(set.weight ?? -1)" : "not done"
                    result.problem(
                        "lost: \(record.side) edit #\(record.number) (run \(run) set \(record.log + 1).\(record.set + 1) "
                            + "\(record.reps)x\(record.weight)) is \(found) on the phone")
                }
            }
        }
    }

    /// Every done set of a tracked run must carry a value some attempted edit wrote to that very set.
    private static func checkPhantoms(
        _ inputs: Inputs, final: [String: WorkoutDocument], into result: inout CheckResult
    ) {
        struct Key: Hashable {
            var run: String
            var log: Int
            var set: Int
        }
        var written: [Key: [(Int, Double)]] = [:]
        var tracked: Set<String> = []
        for record in inputs.records {
            if record.kind == .start, let run = record.run { tracked.insert(run) }
            guard record.kind == .complete, let run = record.run,
                record.outcome == .acknowledged || record.outcome == .indeterminate
            else { continue }
            written[Key(run: run, log: record.log, set: record.set), default: []].append((record.reps, record.weight))
        }
        for run in tracked.sorted() {
            guard let document = final[run] else { continue }
            for (logIndex, log) in document.logs.enumerated() {
                for (setIndex, set) in log.sets.enumerated() where set.isDone {
                    let candidates = written[Key(run: run, log: logIndex, set: setIndex)] ?? []
                    if !candidates.contains(where: { $0.0 == set.reps && $0.1 == set.weight }) {
                        result.phantom += 1
                        result.problem(
                            "phantom: run \(run) set \(logIndex + 1).\(setIndex + 1) is \(set.reps ?? -1)x\(set.weight ?? -1), "
                                + "which no edit wrote")
                    }
                }
            }
        }
    }

    /// Applied twice (the same incoming copy merged twice, from the post-write `ingest` lines: a
    /// merged copy's own version can repeat when a concurrent edit of another set is merged under a
    /// later phone stamp) and out of order (the merged run's version going back); ingest counts.
    private static func checkLog(_ inputs: Inputs, into result: inout CheckResult) {
        var versions: [String: [String]] = [:]
        var incoming: [String: Set<String>] = [:]
        for line in inputs.phoneLog.split(separator: "\n") {
            if line.contains("component=ingest"), let outcome = field("outcome", in: line) {
                result.ingestOutcomes[outcome, default: 0] += 1
                if outcome == "merged", let via = field("via", in: line) { result.acceptedVia[via, default: 0] += 1 }
                if outcome == "merged", let run = field("run", in: line), let version = field("version", in: line),
                    !incoming[run, default: []].insert(version).inserted
                {
                    result.appliedTwice += 1
                    result.problem("applied twice: phoned merged run \(run)'s copy at version \(version) again")
                }
            }
            if line.contains("component=sync"), line.contains("msg=\"external change: run ") {
                result.externalChanges += 1
            }
            if line.contains("component=sync"), let accepted = acceptedVersion(in: line) {
                versions[accepted.run, default: []].append(accepted.updatedAt)
            }
        }
        for (run, sequence) in versions.sorted(by: { $0.key < $1.key }) {
            for (index, version) in sequence.enumerated() {
                if index > 0, let current = Stamp(text: version), let previous = Stamp(text: sequence[index - 1]),
                    current < previous
                {
                    result.outOfOrder += 1
                    result.problem("out of order: run \(run) merged \(version) after \(sequence[index - 1])")
                }
            }
        }
    }

    /// A discarded run must be gone everywhere and never accepted again after its discard.
    private static func checkResurrections(
        _ inputs: Inputs, final: [String: WorkoutDocument], into result: inout CheckResult
    ) {
        var discardedAt: [String: String] = [:]
        for record in inputs.records where record.kind == .discard && record.outcome == .acknowledged {
            if let run = record.run { discardedAt[run] = record.finishedStamp }
        }
        let discarded = inputs.stubs.union(discardedAt.keys)
        result.discardedRuns = discarded.count
        let watchIDs = Set(inputs.watchRuns.map(\.id.rawValue))
        var resurrected: Set<String> = []
        for run in discarded.sorted() {
            var places: [String] = []
            if inputs.workoutFiles.contains(run) { places.append("a file under Workouts/") }
            if final[run] != nil { places.append("phonectl workouts --all") }
            if watchIDs.contains(run) { places.append("the watch's cache") }
            if !places.isEmpty {
                resurrected.insert(run)
                result.problem("resurrected: discarded run \(run) is in \(places.joined(separator: ", "))")
            }
        }
        for line in inputs.phoneLog.split(separator: "\n") where line.contains("component=ingest") {
            guard field("outcome", in: line) == "merged", let run = field("run", in: line),
                let stamp = discardedAt[run], let time = field("ts", in: line), time > stamp
            else { continue }
            if resurrected.insert(run).inserted {
                result.problem("resurrected: phoned accepted run \(run) at \(time), after its discard at \(stamp)")
            }
        }
        result.resurrected = resurrected.count
    }

    /// The unquoted value of `key=` in a logfmt line.
    static func field(_ key: String, in line: Substring) -> String? {
        guard let range = line.range(of: " \(key)=") ?? (line.hasPrefix("\(key)=") ? line.range(of: "\(key)=") : nil)
        else { return nil }
        let rest = line[range.upperBound...]
        if rest.first == "\"" {
            let body = rest.dropFirst()
            return body.firstIndex(of: "\"").map { String(body[..<$0]) }
        }
        return String(rest.prefix { $0 != " " })
    }

    /// `msg="ingest <run>: merged (<status>, version <stamp>)"` → (run, stamp).
    static func acceptedVersion(in line: Substring) -> (run: String, updatedAt: String)? {
        guard let message = field("msg", in: line), message.hasPrefix("ingest "),
            let colon = message.range(of: ": merged ("), let stamp = message.range(of: "version ")
        else { return nil }
        let run = String(message[message.index(message.startIndex, offsetBy: 7)..<colon.lowerBound])
        let version = String(message[stamp.upperBound...].prefix { $0 != ")" })
        return (run, version)
    }
}

/// Whether the two sides agree, and why not when they do not.
struct Agreement: Sendable {
    var agreed: Bool
    var reason: String
}

/// The final convergence condition: both linked, the watch's outbox empty and no edit undelivered,
/// the phone's push acknowledged, and the watch's runs equal the phone's active and recent runs.
func checkAgreement(_ harness: Harness) async -> Agreement {
    guard let watch = await harness.watchStatus() else {
        return Agreement(agreed: false, reason: "watchctl status failed")
    }
    guard let phone = await harness.phoneStatus() else {
        return Agreement(agreed: false, reason: "phonectl status failed")
    }
    guard watch.linked, phone.linked else { return Agreement(agreed: false, reason: "not linked") }
    guard watch.outboxDepth == 0 else {
        return Agreement(agreed: false, reason: "watch outbox holds \(watch.outboxDepth) transfers")
    }
    guard watch.undeliveredEdits == 0 else {
        return Agreement(agreed: false, reason: "watch has \(watch.undeliveredEdits) undelivered edits")
    }
    guard phone.contextGenerationAcknowledged == phone.contextGenerationSent else {
        return Agreement(
            agreed: false,
            reason:
                "push generation \(phone.contextGenerationSent) not acknowledged (at \(phone.contextGenerationAcknowledged))"
        )
    }
    guard let phoneRuns = await harness.phoneWorkouts(), let watchRuns = await harness.watchWorkouts() else {
        return Agreement(agreed: false, reason: "workouts --json failed")
    }
    let phoneByID = Dictionary(phoneRuns.map { ($0.id, $0) }) { first, _ in first }
    let watchByID = Dictionary(watchRuns.map { ($0.id, $0) }) { first, _ in first }
    guard phoneByID == watchByID else {
        let differing = Set(phoneByID.keys).union(watchByID.keys).filter { phoneByID[$0] != watchByID[$0] }
        return Agreement(
            agreed: false,
            reason:
                "\(differing.count) runs differ (phone \(phoneByID.count), watch \(watchByID.count)), e.g. \(differing.first.map { "\($0)" } ?? "-")"
        )
    }
    return Agreement(agreed: true, reason: "")
}
