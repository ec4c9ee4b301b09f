import Foundation
import Synchronization

/// Which side made an edit.
enum Side: String, Codable, Sendable {
    case watch
    case phone
}

/// What an edit did.
enum EditKind: String, Codable, Sendable {
    /// Complete one set with a value encoding the edit's number.
    case complete
    /// Start a run (phone only).
    case start
    /// Discard a run (phone only).
    case discard
    /// End a run the streams have finished with (`phonectl end`, phone only), as a user saves a
    /// workout: without it the active runs, and all the phone keeps of them, would grow with time.
    case end
}

/// How an edit's CLI call ended (see `--help`, "Definitions").
enum EditOutcome: String, Codable, Sendable {
    /// Exit 0.
    case acknowledged
    /// The daemon answered and refused (exit 1): certainly not applied.
    case refused
    /// The daemon was not running (exit 69, no listener): certainly not applied.
    case unavailable
    /// The daemon went away mid-request (or the CLI failed otherwise): may or may not be applied.
    case indeterminate
    /// The CLI rejected its own command line (exit 64): never sent, and the tester's mistake, so
    /// every check fails on it rather than let a workload quietly stop testing anything.
    case malformed

    /// Classifies a CLI's exit status and message.
    init(_ result: CommandResult) {
        switch result.status {
        case 0:
            self = .acknowledged
        case 1
        where result.standardError.contains("without a reply") || result.standardError.contains("malformed response"):
            self = .indeterminate  // killed mid-request, or mid-reply
        case 1:
            self = .refused
        case 69 where result.standardError.contains("is not running"):
            self = .unavailable
        case 64:
            self = .malformed
        default:
            self = .indeterminate
        }
    }
}

/// One edit attempt, as the tester saw it.
struct EditRecord: Sendable {
    var number: Int
    var side: Side
    var kind: EditKind
    /// The run edited (for a start, the run created, when acknowledged).
    var run: String?
    /// 0-based exercise and set (complete only).
    var log = 0
    var set = 0
    var reps = 0
    var weight = 0.0
    var outcome: EditOutcome
    /// The CLI's output when it was not acknowledged.
    var detail = ""
    /// Wall-clock stamp right after the CLI returned (log format), for discards.
    var finishedStamp = ""
    /// Seconds from the workload's start to its recording (`Ledger.record` sets it): the plots' x.
    var finishedSeconds = 0.0
}

/// The shape of the two splits every test creates.
enum WorkloadShape {
    static let watchExercises = 8
    static let watchSetsPerExercise = 10
    /// The watch writes all but the last set of each exercise of its runs; the phone writes that last
    /// set while the watch is on the run, so both sides edit one run at once (merged per set).
    static var watchOwnSetsPerExercise: Int { watchSetsPerExercise - 1 }
    static let phoneExercises = 4
    static let phoneSetsPerExercise = 5
    static var watchSets: Int { watchExercises * watchOwnSetsPerExercise }
    static var phoneSets: Int { phoneExercises * phoneSetsPerExercise }
    /// How many unfinished watch runs the phone keeps started ahead of the watch.
    static let watchRunsAhead = 3

    /// The weight an edit writes: its number, wrapped under the CLI's limit of 100,000 (an hour's
    /// run passes it). Each set is written once, so the wrapped number still names its edit; the
    /// phone's carry a half, so they never equal the watch's.
    static func weight(ofEdit number: Int, phone: Bool) -> Double {
        Double(number % 100_000) + (phone ? 0.5 : 0)
    }
}

/// Set when the edit streams must stop.
final class StopFlag: Sendable {
    private let value = Atomic<Bool>(false)
    var isSet: Bool { value.load(ordering: .relaxed) }
    func set() { value.store(true, ordering: .relaxed) }
}

/// Every edit attempted, plus what the two streams share: which runs exist for the watch, how far
/// the watch is, which runs the phone discarded.
actor Ledger {
    /// The workload's start: edits and kills are plotted against the seconds since.
    nonisolated let began = ContinuousClock.now
    private(set) var records: [EditRecord] = []
    private var counter = 0
    /// Runs started for the watch, oldest first.
    private(set) var watchRuns: [String] = []
    /// Runs started for the phone.
    private(set) var phoneRuns: [String] = []
    /// Watch runs the watch has stopped editing (all sets tried, or refused as gone).
    private var finishedWatchRuns: Set<String> = []
    /// Runs whose discard was acknowledged or may have happened.
    private(set) var discarded: Set<String> = []
    /// Runs a stream has finished with, oldest first, until an `end` of them is answered.
    private var toEnd: [String] = []
    /// Sets the watch has tried per run.
    private var watchProgress: [String: Int] = [:]
    /// Exercises of each watch run whose last set the phone has tried.
    private var phoneProgressInWatchRuns: [String: Int] = [:]

    /// A fresh edit number (shared by both sides, so every written value is unique).
    func nextNumber() -> Int {
        counter += 1
        return counter
    }

    func record(_ record: EditRecord) {
        var record = record
        record.finishedSeconds = secondsSinceStart()
        records.append(record)
    }

    /// Seconds since the workload's start, now.
    nonisolated func secondsSinceStart() -> Double { (ContinuousClock.now - began).seconds }

    func addWatchRun(_ id: String) { watchRuns.append(id) }
    func addPhoneRun(_ id: String) { phoneRuns.append(id) }
    func markDiscarded(_ id: String) { discarded.insert(id) }
    func isDiscarded(_ id: String) -> Bool { discarded.contains(id) }
    func finishWatchRun(_ id: String) {
        if finishedWatchRuns.insert(id).inserted { toEnd.append(id) }
    }
    /// The phone stream moved on from its run `id`.
    func finishPhoneRun(_ id: String) { toEnd.append(id) }
    /// The oldest finished run not yet ended nor discarded.
    func runToEnd() -> String? {
        toEnd.removeAll { discarded.contains($0) }
        return toEnd.first
    }
    /// An `end` of `id` was answered (acknowledged, or refused: the run is already over).
    func markEnded(_ id: String) { toEnd.removeAll { $0 == id } }
    func setWatchProgress(_ id: String, _ sets: Int) { watchProgress[id] = sets }

    /// The run the watch should edit now: the oldest it has not finished.
    func currentWatchRun() -> String? { watchRuns.first { !finishedWatchRuns.contains($0) } }

    /// Watch runs started and neither finished nor discarded.
    func watchRunsAhead() -> Int {
        watchRuns.filter { !finishedWatchRuns.contains($0) && !discarded.contains($0) }.count
    }

    /// The watch's current run, if the watch has edited at least `minimumSets` of it and the phone
    /// has not discarded it yet.
    func watchRunWorthDiscarding(minimumSets: Int) -> String? {
        guard let run = currentWatchRun(), !discarded.contains(run), watchProgress[run, default: 0] >= minimumSets
        else { return nil }
        return run
    }

    /// The watch run and exercise whose last set the phone should write next: the run the watch is
    /// on, while it is and the phone has exercises of it left. Each is handed out once.
    func nextSharedSet() -> (run: String, log: Int)? {
        guard let run = currentWatchRun(), !discarded.contains(run) else { return nil }
        let log = phoneProgressInWatchRuns[run, default: 0]
        guard log < WorkloadShape.watchExercises else { return nil }
        phoneProgressInWatchRuns[run] = log + 1
        return (run, log)
    }

    /// Watch edits attempted so far.
    func watchEditCount() -> Int { records.lazy.filter { $0.side == .watch }.count }
}

/// The two edit streams (see `--help`, "The workload").
struct Workload: Sendable {
    let harness: Harness
    let ledger: Ledger
    let stop: StopFlag
    let seed: UInt64
    /// The splits the phone created at set-up.
    let watchSplit: String
    let phoneSplit: String

    /// Creates the two splits and the first runs; waits until the watch holds its first run.
    static func prepare(harness: Harness, ledger: Ledger, stop: StopFlag, seed: UInt64) async throws -> Workload {
        func split(_ name: String, _ exercises: Int, _ sets: Int) async throws -> String {
            let specs = (1...exercises).flatMap { ["--exercise", "\(name)\($0):\(sets)x5@20"] }
            let result = await harness.phonectl(["split", "create", "--name", name] + specs)
            let id = result.standardOutput.trimmingCharacters(in: .whitespacesAndNewlines)
            guard result.status == 0, !id.isEmpty else {
                throw DaemonError(description: "phonectl split create failed: \(result.transcript)")
            }
            return id
        }
        let workload = Workload(
            harness: harness, ledger: ledger, stop: stop, seed: seed,
            watchSplit: try await split("watch", WorkloadShape.watchExercises, WorkloadShape.watchSetsPerExercise),
            phoneSplit: try await split("phone", WorkloadShape.phoneExercises, WorkloadShape.phoneSetsPerExercise))
        for _ in 0..<WorkloadShape.watchRunsAhead { _ = await workload.start(forWatch: true) }
        guard let first = await ledger.currentWatchRun(),
            await waitUntil(timeout: .seconds(30), { await harness.watchctl(["show", first]).status == 0 }) != nil
        else {
            throw DaemonError(description: "the watch never received the first run; see \(harness.work)/logs")
        }
        return workload
    }

    // MARK: The watch

    /// Completes set after set of the watch's runs until stopped.
    func runWatchStream() async {
        var random = SeededGenerator(seed: seed, stream: 1)
        var present: Set<String> = []
        var next: [String: Int] = [:]
        while !stop.isSet {
            guard let run = await ledger.currentWatchRun() else {
                try? await Task.sleep(for: .milliseconds(50))
                continue
            }
            if !present.contains(run) {
                // Not an edit: wait until the phone's push has brought the run.
                if await harness.watchctl(["show", run]).status == 0 {
                    present.insert(run)
                } else if await ledger.isDiscarded(run) {
                    await ledger.finishWatchRun(run)
                } else {
                    try? await Task.sleep(for: .milliseconds(100))
                }
                continue
            }
            let flow = next[run, default: 0]
            guard flow < WorkloadShape.watchSets else {
                await ledger.finishWatchRun(run)
                continue
            }
            let log = flow / WorkloadShape.watchOwnSetsPerExercise
            let set = flow % WorkloadShape.watchOwnSetsPerExercise
            let number = await ledger.nextNumber()
            let reps = 1 + number % 50
            let weight = WorkloadShape.weight(ofEdit: number, phone: false)
            let result = await harness.watchctl([
                "complete", run, "\(log + 1)", "\(set + 1)", "--reps", "\(reps)", "--weight", "\(weight)",
            ])
            let outcome = EditOutcome(result)
            await ledger.record(
                EditRecord(
                    number: number, side: .watch, kind: .complete, run: run, log: log, set: set, reps: reps,
                    weight: weight, outcome: outcome, detail: outcome == .acknowledged ? "" : result.transcript)
            )
            switch outcome {
            case .acknowledged, .indeterminate:
                next[run] = flow + 1  // never write a set twice: a redo would overwrite it
            case .refused, .malformed:
                let gone = await ledger.isDiscarded(run)
                if result.transcript.contains("no run") || gone {
                    await ledger.finishWatchRun(run)  // the watch learnt the run is gone
                } else {
                    next[run] = flow + 1
                }
            case .unavailable:
                try? await Task.sleep(for: .milliseconds(20))
            }
            await ledger.setWatchProgress(run, next[run, default: 0])
            try? await Task.sleep(for: random.duration(0...0.025))
        }
    }

    // MARK: The phone

    /// Starts runs, completes sets of its own runs and now and then discards one, until stopped.
    func runPhoneStream() async {
        var random = SeededGenerator(seed: seed, stream: 2)
        var phoneRun: String?
        var phoneNext = 0
        while !stop.isSet {
            if await ledger.watchRunsAhead() < WorkloadShape.watchRunsAhead {
                _ = await start(forWatch: true)
            } else if phoneRun == nil || phoneNext >= WorkloadShape.phoneSets {
                if let finished = phoneRun { await ledger.finishPhoneRun(finished) }
                phoneRun = await start(forWatch: false)
                phoneNext = 0
            } else if random.chance(0.5), let run = await ledger.runToEnd() {
                await end(run)
            } else if random.chance(0.004), let target = await ledger.watchRunWorthDiscarding(minimumSets: 5) {
                await discard(target)
            } else if random.chance(0.01), let run = phoneRun {
                await discard(run)
                phoneRun = nil
            } else if random.chance(0.1), let (run, log) = await ledger.nextSharedSet() {
                await completeOnPhone(run, log: log, set: WorkloadShape.watchOwnSetsPerExercise)
            } else if let run = phoneRun {
                let log = phoneNext / WorkloadShape.phoneSetsPerExercise
                let set = phoneNext % WorkloadShape.phoneSetsPerExercise
                switch await completeOnPhone(run, log: log, set: set) {
                case .acknowledged, .indeterminate, .refused, .malformed: phoneNext += 1
                case .unavailable: try? await Task.sleep(for: .milliseconds(20))
                }
            }
            try? await Task.sleep(for: random.duration(0.01...0.06))
        }
    }

    /// `phonectl complete` of one set with a value encoding the edit's number; never retried on the set.
    @discardableResult
    private func completeOnPhone(_ run: String, log: Int, set: Int) async -> EditOutcome {
        let number = await ledger.nextNumber()
        let weight = WorkloadShape.weight(ofEdit: number, phone: true)
        let result = await harness.phonectl([
            "complete", run, "\(log + 1)", "\(set + 1)", "--reps", "5", "--weight", "\(weight)",
        ])
        let outcome = EditOutcome(result)
        await ledger.record(
            EditRecord(
                number: number, side: .phone, kind: .complete, run: run, log: log, set: set, reps: 5,
                weight: weight, outcome: outcome, detail: outcome == .acknowledged ? "" : result.transcript))
        return outcome
    }

    /// `phonectl end` of a run the streams finished with; an end that was not answered is tried again.
    private func end(_ run: String) async {
        switch await phoneRunCommand(.end, run) {
        case .acknowledged, .refused, .malformed: await ledger.markEnded(run)
        case .unavailable: try? await Task.sleep(for: .milliseconds(20))
        case .indeterminate: break
        }
    }

    /// `phonectl start`; returns the new run's ID when acknowledged.
    private func start(forWatch: Bool) async -> String? {
        let number = await ledger.nextNumber()
        let result = await harness.phonectl(["start", forWatch ? watchSplit : phoneSplit])
        let outcome = EditOutcome(result)
        let id = result.standardOutput.trimmingCharacters(in: .whitespacesAndNewlines)
        let run = outcome == .acknowledged && !id.isEmpty ? id : nil
        await ledger.record(
            EditRecord(
                number: number, side: .phone, kind: .start, run: run, outcome: outcome,
                detail: outcome == .acknowledged ? (forWatch ? "watch" : "phone") : result.transcript))
        if let run {
            if forWatch { await ledger.addWatchRun(run) } else { await ledger.addPhoneRun(run) }
        } else if outcome == .unavailable {
            try? await Task.sleep(for: .milliseconds(20))
        }
        return run
    }

    /// `phonectl discard`.
    private func discard(_ run: String) async {
        let outcome = await phoneRunCommand(.discard, run)
        if outcome == .acknowledged || outcome == .indeterminate { await ledger.markDiscarded(run) }
    }

    /// `phonectl end|discard RUN`, recorded.
    private func phoneRunCommand(_ kind: EditKind, _ run: String) async -> EditOutcome {
        let number = await ledger.nextNumber()
        let result = await harness.phonectl([kind.rawValue, run])
        let outcome = EditOutcome(result)
        await ledger.record(
            EditRecord(
                number: number, side: .phone, kind: kind, run: run, outcome: outcome,
                detail: outcome == .acknowledged ? "" : result.transcript, finishedStamp: wallClockStamp()))
        return outcome
    }
}
