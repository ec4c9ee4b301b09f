import SyncEngine
import Testing
import WorkoutModel

@Suite("SyncEngine: a run's file edited in place, keeping its stamps")
struct InPlaceEditTests {
    /// A started run with set 1 completed on the phone, and the engine that holds it.
    private func runWithOneSet() throws -> (SyncEngine, WorkoutDocument) {
        var engine = try readyEngine()
        _ = try engine.perform(.startRun(splitID: id(1), runID: id(5), endingOthers: false), now: at(1))
        _ = try engine.perform(.completeSet(runID: id(5), logIndex: 0, setIndex: 0, reps: 5, weight: 100), now: at(2))
        return (engine, try #require(engine.run(id(5))))
    }

    @Test("a set's reps changed by hand become a new edit: stamped now, written back, pushed")
    func repsByHand() throws {
        var (engine, mine) = try runWithOneSet()
        // A person opens the file and changes 5 reps to 3; the stamp stays as it was.
        var edited = mine
        edited.logs[0].sets[0].reps = 3
        #expect(edited.version == mine.version)
        let actions = engine.handle(.externalChange(.documentChanged(.workout(edited)), now: at(10)))
        let taken = try #require(engine.run(id(5)))
        #expect(taken.logs[0].sets[0].reps == 3)
        #expect(taken.logs[0].sets[0].stamp > mine.logs[0].sets[0].stamp, "a new edit, newer than the watch's copy")
        #expect(taken.version > mine.version)
        #expect(writtenRuns(actions) == [taken], "the file holds the new stamp: a restart reads the same")
        #expect(pushes(actions).first?.0.workouts == [taken])
        #expect(actions.contains(.log(.externalRunEditedInPlace(id(5)))))
        // The watch's copy of set 1 (the old stamp) merges under the new one.
        #expect(try mine.merged(with: taken) == taken)
        // Its own write, seen again by the watcher, changes nothing.
        #expect(engine.handle(.externalChange(.documentChanged(.workout(taken)), now: at(11))).isEmpty)
    }

    @Test("a late echo of the phone's own older write is never taken for an edit by hand")
    func echoIsNotAnEdit() throws {
        var engine = try readyEngine()
        _ = try engine.perform(.startRun(splitID: id(1), runID: id(5), endingOthers: false), now: at(1))
        _ = try engine.perform(.completeSet(runID: id(5), logIndex: 0, setIndex: 0, reps: 5, weight: 100), now: at(2))
        let older = try #require(engine.run(id(5)))
        _ = try engine.perform(.undoSet(runID: id(5), logIndex: 0, setIndex: 0), now: at(3))
        let newer = try #require(engine.run(id(5)))
        #expect(
            engine.handle(.externalChange(.documentChanged(.workout(older)), now: at(4))) == [
                .writeWorkout(newer), .log(.externalCopyCovered(id(5), version: older.version)),
            ])
        #expect(engine.run(id(5)) == newer)
    }

    @Test("a change by hand to what a run cannot change in place is undone on disk, and nothing is pushed")
    func skeletonByHand() throws {
        var (engine, mine) = try runWithOneSet()
        var renamed = mine
        renamed.logs[0].exerciseName = "Front squat"
        let actions = engine.handle(.externalChange(.documentChanged(.workout(renamed)), now: at(10)))
        #expect(writtenRuns(actions) == [mine])
        #expect(pushes(actions).isEmpty)
        #expect(actions.contains(.log(.externalRunEditRefused(id(5)))))
        #expect(engine.run(id(5)) == mine)
    }

    @Test("the same document written differently (spacing, key order) is no edit at all")
    func sameDocument() throws {
        var (engine, mine) = try runWithOneSet()
        #expect(engine.handle(.externalChange(.documentChanged(.workout(mine)), now: at(10))).isEmpty)
    }

    @Test("a split renamed by hand under the same updatedAt becomes a new edit; one made invalid is put back")
    func splitByHand() throws {
        var engine = try readyEngine()
        let mine = try #require(engine.splits[id(1)])
        var renamed = mine
        renamed.name = "Leg day"
        let actions = engine.handle(.externalChange(.documentChanged(.split(renamed)), now: at(10)))
        let taken = try #require(engine.splits[id(1)])
        #expect(taken.name == "Leg day" && taken.updatedAt > mine.updatedAt)
        #expect(actions.contains(.writeSplit(taken)))
        #expect(pushes(actions).first?.0.splits.contains(taken) == true)
        #expect(actions.contains(.log(.externalSplitEditedInPlace(id(1)))))

        var blank = taken
        blank.name = ""
        let refused = engine.handle(.externalChange(.documentChanged(.split(blank)), now: at(11)))
        #expect(refused.contains(.writeSplit(taken)))
        #expect(pushes(refused).isEmpty)
        #expect(engine.splits[id(1)] == taken)
    }
}
