import Nodes

/// How often each kind of diagnostic came, for a log that stays readable when one repeats every
/// turn: a kind is worth a line at its 1st, 2nd, 4th, 8th… time.
package struct TurnDiagnosticTally: Sendable {
    private var budgetsSpent = 0
    private var readsRepeated = 0

    package init() {}

    /// Counts `diagnostic`; returns how many of its kind came so far when this one is worth a line.
    package mutating func count(_ diagnostic: TurnDiagnostic) -> Int? {
        let times: Int
        switch diagnostic {
        case .budgetSpent:
            budgetsSpent += 1
            times = budgetsSpent
        case .readsRepeated:
            readsRepeated += 1
            times = readsRepeated
        }
        return times.nonzeroBitCount == 1 ? times : nil
    }
}
