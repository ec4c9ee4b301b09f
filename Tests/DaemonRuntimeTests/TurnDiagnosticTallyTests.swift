import DaemonRuntime
import Nodes
import Testing
import WorkoutModel

/// The shell's log of turns cut short (`NodeShell.diagnose`).
@Suite("turn diagnostic tally")
struct TurnDiagnosticTallyTests {
    @Test(
        "a diagnostic that repeats every turn is worth a line at its 1st, 2nd, 4th, 8th… time, each kind counted apart")
    func diagnosticTally() {
        var tally = TurnDiagnosticTally()
        let run = DocumentID(bytes: [UInt8](repeating: 0x11, count: 16))
        let repeated = TurnDiagnostic.readsRepeated(
            NeedsReads(documents: [run: Timestamp(microsecondsSinceEpoch: 0)]))
        let logged = (1...9).map { _ in tally.count(repeated) }
        #expect(logged == [1, 2, nil, 4, nil, nil, nil, 8, nil])
        #expect(tally.count(.budgetSpent(events: 32)) == 1)
        #expect(tally.count(repeated) == nil)
    }
}
