import SyncEngine
import Testing
import WorkoutModel

@Suite("SyncEngine: phone epochs")
struct EpochTests {
    @Test("a phone without an epoch starts one at the gather and names it in every push")
    func startsAndPushesEpoch() throws {
        var engine = SyncEngine(settings: nil)
        let gathered = engine.handle(.gatherFinished(now: t0))
        #expect(gathered.contains(.persistEpoch(t0)))
        _ = engine.handle(.linkActivated(now: t0))
        let actions = try engine.perform(.createSplit(id: id(1), name: "Legs", exercises: [squat]), now: at(1))
        #expect(pushes(actions).map(\.0.epoch) == [t0])

        // Both copies were written (the documents' epoch file and the state's epoch.json).
        var restarted = SyncEngine(settings: nil, epoch: t0, stateEpoch: t0)
        _ = restarted.handle(.documentScanned(.split(try #require(engine.splits[id(1)])), now: at(2)))
        let regathered = restarted.handle(.gatherFinished(now: at(2)))
        #expect(!regathered.contains { if case .persistEpoch = $0 { true } else { false } })
        #expect(restarted.epoch == t0, "a state with documents keeps its epoch")
    }

    /// Found by the simulator (seed 19303): a reinstall (state lost, documents kept) and then a wipe
    /// of the documents lost both copies, and the new epoch, at a clock behind, was refused for good.
    @Test("a reinstall keeps the documents' epoch and writes the state's copy again")
    func reinstallRewritesStateCopy() throws {
        var engine = SyncEngine(settings: nil, epoch: t0)
        _ = engine.handle(
            .documentScanned(.split(SplitDocument(id: id(1), name: "L", exercises: [squat], updatedAt: t0)), now: at(2))
        )
        let gathered = engine.handle(.gatherFinished(now: at(2)))
        #expect(gathered.contains(.persistEpoch(t0)))
        #expect(!gathered.contains { if case .log(.epochStarted) = $0 { true } else { false } })
        #expect(engine.epoch == t0)
    }

    @Test("a wiped document directory starts a newer epoch, even with the clock behind the old one")
    func pristineStartsNewerEpoch() {
        var engine = SyncEngine(settings: nil, epoch: at(100))
        let gathered = engine.handle(.gatherFinished(now: at(5)))
        #expect(gathered.contains(.persistEpoch(at(100).advanced(by: .microseconds(1)))))
    }

    @Test("an update made against another epoch is vetoed, never written, and re-pushed; one without an epoch passes")
    func vetoesOtherEpochs() throws {
        var engine = try readyEngine()
        let epoch = try #require(engine.epoch)
        let started = try engine.perform(.startRun(splitID: id(1), runID: id(100), endingOthers: false), now: at(1))
        let run = try #require(writtenRuns(started).first)
        var edited = run
        try edited.completeSet(logID: run.logs[0].id, setIndex: 0, reps: 5, weight: 100, at: at(10))

        for other in [epoch.advanced(by: .seconds(-60)), epoch.advanced(by: .seconds(60))] {
            let (outcome, actions) = engine.ingestFromWatch(edited, epoch: other, now: at(11))
            #expect(outcome == .vetoedEpoch)
            #expect(writtenRuns(actions).isEmpty)
            #expect(pushes(actions).map(\.1) == [true])
            #expect(engine.run(run.id) == run)
        }
        #expect(engine.ingestFromWatch(edited, epoch: epoch, now: at(12)).outcome == .merged)
        var later = edited
        try later.completeSet(logID: run.logs[0].id, setIndex: 1, reps: 5, weight: 100, at: at(20))
        #expect(engine.ingestFromWatch(later, now: at(21)).outcome == .merged)
    }
}
