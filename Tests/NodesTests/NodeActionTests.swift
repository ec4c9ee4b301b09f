import AdminCommands
import Nodes
import Testing
import WorkoutModel

/// What a node's reply prints.
@Suite("Node actions: numbers in replies")
struct NodeActionTests {
    /// `phonectl show` of a run holding `1e308` (or a document's `activeSeconds` of `1e300`) trapped
    /// phoned in `Int(value)`.
    @Test("a number prints whole where an Int holds it, and as Swift writes it otherwise, never trapping")
    func numbersPrint() {
        #expect(format(60) == "60" && format(62.5) == "62.5" && format(0) == "0")
        #expect(format(1e300) == "1e+300" && format(-1e19) == "-1e+19")
        #expect(format(9_007_199_254_740_992) == "9007199254740992")
    }
}

@Suite("Publishing a run's file: after what follows its durable write, before the replies")
struct PublishingTests {
    @Test("each run written once is published once, at the folder of its last write; no write, nothing added")
    func oncePerRun() {
        let run = DocumentID(bytes: Array(repeating: 0xA1, count: 16))
        let split = SplitDocument(
            id: DocumentID(bytes: Array(repeating: 0xB2, count: 16)), name: "Legs",
            exercises: [
                ExerciseTemplate(name: "Squat", equipment: "barbell", targetSets: 1, targetReps: 5, targetWeight: 80)
            ],
            updatedAt: Timestamp(microsecondsSinceEpoch: 0))
        let may = Timestamp(microsecondsSinceEpoch: 1_780_000_000_000_000)
        let june = Timestamp(microsecondsSinceEpoch: 1_782_000_000_000_000)
        guard var first = try? WorkoutDocument.start(from: split, id: run, at: Stamp(time: may, origin: .phone)) else {
            Issue.record("no run")
            return
        }
        var second = first
        second.startedAt = june
        first.splitName = "first"
        let actions: [PhoneNode.Action] = [
            .store(.writeWorkout(first)), .node(.callAtEndOfTurn), .store(.writeWorkout(second)),
            .node(.notifyStopping),
        ]
        #expect(
            PhoneNode.publishingWrites(actions) == actions + [.store(.publishWorkout(run, startedAt: june))])
        #expect(PhoneNode.publishingWrites([.node(.notifyStopping)]) == [.node(.notifyStopping)])
    }
}
